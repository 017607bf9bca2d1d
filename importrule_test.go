package autoagent_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/autoagent-go/autoagent"

// pkgGraph is what go list says of the module's packages: each one's
// direct imports and all its dependencies, both without the module
// prefix ("" is the root package).
type pkgGraph map[string]struct{ imports, deps []string }

func listPackages(t *testing.T) pkgGraph {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	g := pkgGraph{}
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) != 3 {
			t.Fatalf("go list line %q", line)
		}
		g[ours(f[0])] = struct{ imports, deps []string }{oursOnly(f[1]), oursOnly(f[2])}
	}
	if len(g) < 20 {
		t.Fatalf("go list found only %d packages", len(g))
	}
	return g
}

func ours(p string) string { return strings.TrimPrefix(strings.TrimPrefix(p, module), "/") }

func oursOnly(list string) []string {
	var out []string
	for _, p := range strings.Fields(list) {
		if p == module || strings.HasPrefix(p, module+"/") {
			out = append(out, ours(p))
		}
	}
	return out
}

func isInternal(p string) bool {
	return strings.HasPrefix(p, "internal/") || strings.Contains(p, "/internal/") || p == "internal"
}

func under(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

// importRule is the import rule (docs/ARCHITECTURE.md §10) for one package: what of ours it may
// import besides internal packages.
type importRule struct {
	pkg     string
	allowed []string // packages, or directories with a trailing "/"
	why     string
}

var importRules = []importRule{
	{"llm", nil, "llm imports nothing of ours"},
	{"manifest", nil, "manifest imports nothing of ours"},
	{"tool", []string{"llm"}, "tool depends on llm only"},
	{"memory", []string{"llm"}, "memory → llm"},
	{"trace", []string{"llm"}, "trace → llm"},
	{"mcp", []string{"tool", "llm"}, "mcp → tool"},
	{"loop", []string{"llm", "tool", "memory", "trace", "codemode", "loop/refusal", "retrieve"}, "loop → llm, tool, memory, trace, codemode, retrieve; it knows nothing about WebAssembly"},
	{"loop/refusal", []string{"llm"}, "the refusal type is vocabulary: what the loop writes, durable and eval read"},
	{"codemode", []string{"llm", "tool"}, "codemode is the loop's vocabulary of code mode: the program tool's spec and declarations"},
	{"codemode/jsprogram", []string{"codemode", "host", "loop", "synth", "tool", "llm"}, "jsprogram runs programs in the host's JavaScript engine, its calls through the loop's gate"},
	{"codemode/pyprogram", []string{"codemode", "host", "loop", "tool", "llm"}, "pyprogram runs programs in the host's Python engine, its calls through the loop's gate"},
	{"host", []string{"tool", "manifest", "llm", "host/internal/"}, "host → tool, manifest; host never imports loop, nor its plugins directory"},
	{"host/plugindir", []string{"host", "tool", "manifest", "llm"}, "the plugins directory is a user of the host's public API"},
	{"providers/openai", []string{"llm"}, "providers/* → llm"},
	{"providers/anthropic", []string{"llm"}, "providers/* → llm"},
	{"providers/gemini", []string{"llm"}, "providers/* → llm"},
	{"providers/scripted", []string{"llm"}, "providers/* → llm"},
	{"providers/routing", []string{"llm"}, "providers/* → llm"},
	{"providers/remote", []string{"llm"}, "providers/* → llm"},
	{"providers/providertest", []string{"llm"}, "providers/* → llm"},
	{"providers/catalog", []string{"llm", "providers/"}, "the catalog is the one table of the providers by name"},
	{"orchestrator", []string{"llm"}, "the orchestrator drives a model over the host's flow, and knows nothing else"},
	{"session", []string{"llm"}, "session stores conversations"},
	{"session/sessiontest", []string{"llm", "session"}, "a conformance suite imports what it checks"},
	{"session/sqlitestore", []string{"llm", "session"}, "the SQLite store is a Store, apart so that session links no database"},
	{"synth", []string{"host", "manifest", "tool", "llm"}, "synth → host, manifest, tool, llm"},
	{"durable", []string{"codemode", "llm", "loop", "loop/refusal", "policy", "tool"}, "durable runs the loop in a workflow; the tools and the program runner are the worker's"},
	{"policy", []string{"loop", "llm", "tool"}, "policy is a language over the loop's public types; the loop knows nothing of it"},
	{"eval", []string{"llm", "loop", "loop/refusal", "trace"}, "eval runs agents and reads their traces"},
	{"serve", []string{"loop", "llm", "session", "manifest", "host/plugindir", "eval", "trace"}, "serve is the HTTP API over the loop, the session store, the plugins directory, evals and traces; it never imports the root, which mounts it"},
	{"trace/otel", []string{"trace", "llm"}, "trace/otel exports trace events"},
	{"trace/otel/otlp", []string{"trace", "trace/otel", "llm"}, "otlp sends trace/otel's spans over OTLP/HTTP: the one package linking the OpenTelemetry SDK"},
	{"memory/memtool", []string{"memory", "tool", "llm"}, "memtool makes tools of a memory"},
	{"memory/remote", []string{"memory", "llm"}, "memory/remote serves a memory over go-plugin"},
	{"memory/sqlitestore", []string{"memory", "llm"}, "sqlitestore stores a Fact memory's facts"},
	{"memory/memorytest", []string{"memory", "llm"}, "a conformance suite imports what it checks"},
	{"memory/eval", []string{"memory", "memory/", "tool", "llm"}, "the memory eval runs memories and their tools"},
	{"oci", []string{"manifest"}, "oci → manifest: OCI distribution and signatures, with their dependencies, for the CLI only"},
	{"rules", []string{"trace", "llm"}, "rules reads rule files and traces which one a run used"},
	{"skills", []string{"tool", "llm"}, "skills are tools over folders; the loop knows nothing of them"},
	{"retrieve", []string{"llm", "memory", "session"}, "retrieve reads documents, facts and sessions; the loop calls it, it never calls the loop"},
	{"retrieve/retrievetest", []string{"retrieve"}, "a conformance suite imports what it checks"},
	{"llm/cache", []string{"llm", "trace"}, "the response cache is a Provider wrapping another, traced; it stays out of the loop"},
	{"workspace", []string{"loop", "tool", "trace", "llm"}, "workspace → loop (who made a change), tool, trace; never host: the host's Journal interface is met by its Before method"},
	{"sandbox", []string{"", "host", "host/plugindir", "synth", "codemode", "codemode/jsprogram", "codemode/pyprogram", "manifest", "loop", "tool", "trace", "workspace", "llm"},
		"sandbox is a Feature of the root: the WASM host, the plugins directory, code mode and create_tool"},
	{"mcp/mount", []string{"", "mcp", "manifest"}, "mount is a Feature of the root: MCP servers' tools"},
}

// unruled are the packages that may import anything of ours: the front
// door, the CLI, the examples and commands, and packages that hold only
// data or tests.
func unruled(p string) bool {
	return p == "" || under(p, "cmd") || under(p, "examples") || strings.Contains(p, "/cmd/") ||
		p == "plugins" || p == "pdk/conformance"
}

func allowedBy(r importRule, imp string) bool {
	if isInternal(imp) {
		return true
	}
	for _, a := range r.allowed {
		if imp == a || (strings.HasSuffix(a, "/") && strings.HasPrefix(imp, a)) {
			return true
		}
	}
	return false
}

// TestImportRule enforces the import rule (docs/ARCHITECTURE.md §10, docs in
// RATIONALE.md): each core package imports only what the rule lets it; no
// internal package imports providers/* (provider construction by name is
// providers/catalog's) or a public package that imports it back.
func TestImportRule(t *testing.T) {
	g := listPackages(t)
	checkRules(t, g, importRules, allowedBy)
	for name, p := range g {
		if !isInternal(name) {
			continue
		}
		for _, imp := range p.imports {
			if under(imp, "providers") {
				t.Errorf("%s imports %s: an internal package may not build providers (providers/catalog does)", name, imp)
			}
			if isInternal(imp) {
				continue
			}
			for _, d := range g[imp].deps {
				if d == name {
					t.Errorf("%s imports %s, which imports it back", name, imp)
				}
			}
		}
	}
}

// TestPackageMap: every package of the module is placed: internal, free
// of the rule (unruled), or with a rule above; and every directory of it
// stands in the package map of docs/ARCHITECTURE.md §1, so that a package
// added without a place in the map, or a map that names what is gone,
// fails here rather than in review.
func TestPackageMap(t *testing.T) {
	g := listPackages(t)
	ruled := map[string]bool{}
	for _, r := range importRules {
		ruled[r.pkg] = true
	}
	doc, err := os.ReadFile("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "## 1. Package map")
	pkgMap, _, ok2 := strings.Cut(after, "\n## ")
	if !ok || !ok2 {
		t.Fatal("docs/ARCHITECTURE.md has no section 1. Package map")
	}
	// The directories the map names, each at the start of a line.
	named := map[string]bool{}
	for line := range strings.Lines(pkgMap) {
		if f := strings.Fields(line); len(f) > 0 && line[0] != ' ' && strings.HasSuffix(f[0], "/") {
			named[strings.TrimSuffix(f[0], "/")] = true
		}
	}
	for name := range g {
		if !isInternal(name) && !unruled(name) && !ruled[name] {
			t.Errorf("%s has no import rule: add one to importRules (and the package to docs/ARCHITECTURE.md §1)", name)
		}
		if name == "" || isInternal(name) && strings.HasPrefix(name, "internal/") {
			continue
		}
		placed := false
		for dir := range named {
			placed = placed || under(name, dir)
		}
		if !placed {
			t.Errorf("%s: docs/ARCHITECTURE.md §1 does not name it or a directory holding it", name)
		}
	}
	// And the other way: each directory the map names exists as a package
	// or a directory of packages.
	for dir := range named {
		if strings.Contains(dir, "*") {
			continue
		}
		found := false
		for name := range g {
			if under(name, dir) {
				found = true
				break
			}
		}
		if !found && dir != "testdata/wasm" {
			t.Errorf("docs/ARCHITECTURE.md §1 names %s/, which holds no package", dir)
		}
	}
}

// capabilityRules: the host's capability packages are written against
// hostcall's one narrow interface, so each reads on its own: none imports
// the host, another capability, or anything of ours beyond these (internal
// packages included, unlike importRules).
var capabilityRules = []importRule{
	{"host/internal/hostcall", []string{"manifest"}, "hostcall is the interface the capabilities are written against"},
	{"host/internal/kernel", nil, "the Extism kernel's memory knows no grants"},
	{"host/internal/netcap", []string{"host/internal/hostcall", "manifest"}, "a capability sees the call through hostcall only"},
	{"host/internal/kvcap", []string{"host/internal/hostcall", "manifest"}, "a capability sees the call through hostcall only"},
	{"host/internal/fscap", []string{"host/internal/hostcall", "manifest"}, "a capability sees the call through hostcall only"},
	{"host/internal/toolcall", []string{"host/internal/hostcall", "tool"}, "a guest-reachable function sees the call through hostcall only"},
	{"host/internal/notify", []string{"host/internal/hostcall"}, "a guest-reachable function sees the call through hostcall only"},
	{"host/internal/appfn", []string{"host/internal/hostcall"}, "a guest-reachable function sees the call through hostcall only"},
	{"host/internal/kernelfn", []string{"host/internal/hostcall", "host/internal/kernel", "host/internal/rewrite", "host/internal/wasmbin"},
		"the kernel's imports see the call through hostcall, and the kernel's and the rewrite's names"},
	{"host/internal/wasiguard", nil, "the WASI guard sees the call through its own three methods"},
	{"host/internal/hostmod", []string{"host/internal/hostcall"}, "building host modules knows the tables, not the instance"},
}

// TestCapabilityPackagesStandAlone enforces capabilityRules.
func TestCapabilityPackagesStandAlone(t *testing.T) {
	checkRules(t, listPackages(t), capabilityRules, func(r importRule, imp string) bool {
		return slices.Contains(r.allowed, imp)
	})
}

// checkRules reports every import of a ruled package that allowed refuses.
func checkRules(t *testing.T, g pkgGraph, rules []importRule, allowed func(importRule, string) bool) {
	t.Helper()
	for _, r := range rules {
		p, ok := g[r.pkg]
		if !ok {
			t.Errorf("the rule names %s, which go list does not know", r.pkg)
			continue
		}
		for _, imp := range p.imports {
			if !allowed(r, imp) {
				t.Errorf("%s imports %s (%s)", r.pkg, imp, r.why)
			}
		}
	}
}

// heavy are what the front door may not link: each comes in through an
// interface of Config, built by the package that owns it (RATIONALE: "Why
// does Config take a session.Store, trace sinks and a provider?" and "Why
// are plugins, MCP and code mode not fields of Config?"). An entry is a
// module or package path, and covers the packages under it.
var heavy = []struct{ module, owner string }{
	{"github.com/tetratelabs/wazero", "sandbox (Config.Features)"},
	{module + "/host", "sandbox (Config.Features)"},
	{module + "/synth", "sandbox (Config.Features)"},
	{module + "/codemode/jsprogram", "sandbox (Config.Features)"},
	{module + "/codemode/pyprogram", "sandbox (Config.Features)"},
	{module + "/internal/pluginload", "sandbox (Config.Features)"},
	{module + "/mcp", "mcp/mount (Config.Features)"},
	{module + "/serve", "serve.New over Runtime.Agent"},
	{"modernc.org/sqlite", "session/sqlitestore (Config.Sessions)"},
	{"net/http", "providers/catalog (Config.LLM)"},
	{module + "/providers/catalog", "providers/catalog (Config.LLM)"},
	{"google.golang.org/grpc", "providers/remote (Config.LLM)"},
	{"github.com/hashicorp/go-plugin", "providers/remote (Config.LLM)"},
	{"go.opentelemetry.io/otel/sdk", "trace/otel/otlp (Config.TraceSinks)"},
	{"go.opentelemetry.io/otel/exporters", "trace/otel/otlp (Config.TraceSinks)"},
	{"oras.land/oras-go", "oci (the CLI's tools push and pull)"},
	{"github.com/sigstore", "oci (the CLI's tools sign and pull)"},
	{"github.com/distribution", "internal/registrytest (tests only)"},
}

// TestRootLinksNoHeavyMachinery: the root package, without its tests,
// links no database, RPC, exporter, WASM host, MCP, synth, code-mode
// engine or HTTP API (STYLE 23: a front door that costs what it gives).
func TestRootLinksNoHeavyMachinery(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"/loop") {
		t.Fatalf("go list -deps . lists %d packages, not the loop: not the root's dependencies", len(deps))
	}
	for _, d := range deps {
		for _, h := range heavy {
			if d == h.module || strings.HasPrefix(d, h.module+"/") {
				t.Errorf("the root links %s: take it through an interface built by %s", d, h.owner)
			}
		}
	}
}
