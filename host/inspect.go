package host

import (
	"context"
	"slices"

	"github.com/autoagent-go/autoagent/manifest"
)

// Inspection is what [Host.Inspect] learns about a module without running
// it with any capability.
type Inspection struct {
	SHA256      string
	ABI         ABI
	Description Description
	// Needs lists the grant kinds the module's imports call for ("net",
	// "kv", "tools"), sorted. Without one the module still loads, and each
	// call of such an import is refused (see Gated, Ungranted).
	Needs []string
	// Imports lists every function the module imports, "module.name".
	Imports []string
	// HostFunctions lists the imports that are an application's host
	// functions (see [Function]), "namespace.name", sorted: each needs
	// the grant host:namespace.name, and a host whose Options.Functions
	// lack it refuses the module at load.
	HostFunctions []string
	// Gated lists the imports whose calls need a grant, each with the
	// grant it needs, in the module's import order: the capability
	// functions of Needs and the host functions.
	Gated []GatedImport
}

// GatedImport is an import whose calls need a grant.
type GatedImport struct {
	Import string `json:"import"` // "extism:host/env.http_request"
	// Need is the grant kind it needs, any grant of the kind ("net", "kv",
	// "tools"), or the whole grant of a host function ("host:app.upper").
	Need string `json:"need"`
}

// Ungranted returns the imports of Gated that grants do not allow: the
// module loads with them, and each of their calls is refused at call time
// with a capability refusal (host/ABI.md). It is what tools inspect and
// tools approve show as "imports present but not granted".
func (ins *Inspection) Ungranted(grants []manifest.Grant) []GatedImport {
	var out []GatedImport
	for _, gi := range ins.Gated {
		if !slices.ContainsFunc(grants, func(g manifest.Grant) bool { return allows(g, gi.Need) }) {
			out = append(out, gi)
		}
	}
	return out
}

// allows reports whether g satisfies need, a grant kind or a whole
// host: grant, as the instance's Granted does at call time.
func allows(g manifest.Grant, need string) bool {
	if g.Kind == manifest.KindHost {
		return g.String() == need
	}
	return string(g.Kind) == need
}

// Inspect compiles b and reads its describe document with no capabilities
// (in a sandbox process unless Options.Isolation says otherwise: nobody
// approved the module yet)
// (the sidecar when given), without checking its imports against any
// grant: it is how a person reviews a module before approving it. It fails
// like [Host.Load] on malformed bytes, a missing ABI, an import the host
// does not provide, or an invalid describe document.
func (h *Host) Inspect(ctx context.Context, name string, b, sidecar []byte) (*Inspection, error) {
	if name == "" {
		name = "module"
	}
	if err := h.begin(); err != nil {
		return nil, err
	}
	defer h.busy.Done()
	if h.isolated() {
		return h.inspectIsolated(ctx, name, b, sidecar)
	}
	sha := manifest.Sum(b)
	e, err := h.compile(ctx, sha, b, h.limits.Tables)
	if err != nil {
		return nil, compileErr(name, err)
	}
	defer h.release(e)
	if err := h.checkImports(name, e, true); err != nil {
		return nil, err
	}
	ins := &Inspection{SHA256: sha, ABI: e.abi, Imports: slices.Clone(e.imports)}
	needs := map[string]bool{}
	for _, f := range e.mod.ImportedFunctions() {
		m, n, _ := f.Import()
		k := capabilityOf(m, n)
		if k != "" && !needs[k] {
			needs[k] = true
			ins.Needs = append(ins.Needs, k)
		}
		if embedderImport(m, n) {
			ins.HostFunctions = append(ins.HostFunctions, m+"."+n)
			k = string(manifest.KindHost) + ":" + m + "." + n
		}
		if k != "" {
			ins.Gated = append(ins.Gated, GatedImport{Import: m + "." + n, Need: k})
		}
	}
	slices.Sort(ins.Needs)
	slices.Sort(ins.HostFunctions)
	d, err := h.describe(ctx, e, name, sidecar, h.limits)
	if err != nil {
		return nil, err
	}
	ins.Description = d.desc
	return ins, nil
}

// implied are the grants an import asks for by itself: a module that
// reads the clock or draws randomness may be approved with clock or random
// though its describe document lists neither (a Go guest's runtime imports
// both), and a hyper-mcp plugin that says its lists change (they live in
// its instance's memory) asks for state.
var implied = map[string]manifest.Kind{
	"wasi_snapshot_preview1.clock_time_get":      manifest.KindClock,
	"wasi_snapshot_preview1.clock_res_get":       manifest.KindClock,
	"wasi_snapshot_preview1.random_get":          manifest.KindRandom,
	userModule + ".notify_tool_list_changed":     manifest.KindState,
	userModule + ".notify_prompt_list_changed":   manifest.KindState,
	userModule + ".notify_resource_list_changed": manifest.KindState,
}

// Requested returns the grants the module asks for: its describe
// document's, then clock and random where it imports the WASI function
// that uses them (a module reading the clock asks for it by that), state
// where it imports a notify_*_list_changed function, then
// host:NAMESPACE.NAME for each host function it imports, each once.
func (ins *Inspection) Requested() ([]manifest.Grant, error) {
	gs, err := ins.Description.RequestedGrants()
	if err != nil {
		return nil, err
	}
	for _, kind := range []manifest.Kind{manifest.KindClock, manifest.KindRandom, manifest.KindState} {
		g := manifest.Grant{Kind: kind}
		if ins.Implies(g) && !slices.ContainsFunc(gs, func(h manifest.Grant) bool { return h.Kind == kind }) {
			gs = append(gs, g)
		}
	}
	for _, f := range ins.HostFunctions {
		g := manifest.Grant{Kind: manifest.KindHost, Name: f}
		if !slices.Contains(gs, g) {
			gs = append(gs, g)
		}
	}
	return gs, nil
}

// Implies reports whether the module's imports ask for g by themselves
// (clock or random, where it imports the WASI function that uses them;
// state, where it imports a notify_*_list_changed function; a host
// function it imports), so granting it is no more than the module
// requests.
func (ins *Inspection) Implies(g manifest.Grant) bool {
	if g.Kind == manifest.KindHost {
		return slices.Contains(ins.HostFunctions, g.Name)
	}
	for _, imp := range ins.Imports {
		if kind, ok := implied[imp]; ok && kind == g.Kind {
			return true
		}
	}
	return false
}
