package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// Description is a module's describe document (docs/ARCHITECTURE.md §3): the tools it
// offers and the capabilities it asks for. It is what the module's
// `describe` export returns, or what its sidecar NAME.tool.json holds.
type Description struct {
	Tools []ToolDescription `json:"tools"`
	// Capabilities are the grant strings the module asks for; a person
	// approves some or all of them. None when absent.
	Capabilities []string `json:"capabilities,omitempty"`
	// Config holds Extism config keys a sidecar gives the module
	// (config_get), such as the script of a JavaScript tool whose module is
	// the shared engine. Only a sidecar's config is used: it is pinned with
	// the module by the manifest (sidecar_sha256). Keys set by the
	// application (Module.Config) or by env: grants win over it.
	Config map[string]string `json:"config,omitempty"`
	// Prompts, Resources and ResourceTemplates are what a hyper-mcp v2
	// plugin lists besides its tools (list_prompts, list_resources,
	// list_resource_templates); see [Loaded.Prompts].
	Prompts           []Prompt           `json:"prompts,omitempty"`
	Resources         []Resource         `json:"resources,omitempty"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates,omitempty"`
}

// ToolDescription is one tool of a module, in MCP's Tool shape.
type ToolDescription struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  *Annotations    `json:"annotations,omitempty"`
	// Export, in a sidecar, makes the tool a plain Extism function of the
	// module instead of a tool of its call export: the host calls that
	// export (of type () -> i32, or _start) with the tool's string
	// argument "input" as its input (the arguments' JSON text when there
	// is none), and its output is the result's text. That is how a plugin
	// written for Extism, which knows nothing of tools, becomes one
	// unchanged (host/ABI.md, "Extism plugins as tools").
	Export string `json:"export,omitempty"`
}

// Annotations are MCP's tool annotations: hints from the module's author.
// A nil field is absent. The host uses them only to add flags, never to
// remove what the module's grants imply (see [Loaded.Tools]): openWorldHint
// can make a tool untrusted, but readOnlyHint and idempotentHint make
// idempotent only a module granted nothing with effects (net, fs.write, fs.workspace,
// kv, tools, a host function not declared idempotent). A loaded module's
// [Loaded.Describe] shows them so limited.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// RequestedGrants parses Capabilities: grant strings, or bare kinds ("net",
// "fs.read", …) for a capability whose value the operator chooses (see
// manifest.ParseRequest).
func (d Description) RequestedGrants() ([]manifest.Grant, error) {
	return manifest.ParseRequests(d.Capabilities)
}

// MaxDescribe bounds a describe document, whether a module's describe
// export returns it or a sidecar holds it (a longer one is refused).
const MaxDescribe = 1 << 20

// maxDescribeObjects bounds the objects of all a document's schemas
// together (each takes about a kilobyte compiled).
const maxDescribeObjects = 16384

// maxTools bounds the tools of a describe document: each costs a schema
// compiled, a registry entry and a line of every tool list, and a module
// of 29 000 tools without schemas held 75 MB per load (found by attacking
// our own sandbox).
const maxTools = 1024

// maxDescribeFootprint bounds what all a document's compiled schemas hold
// (tool.Schema.Footprint): each is bounded, but a thousand bounded
// schemas are not.
const maxDescribeFootprint = 32 << 20

// parseDescription decodes and validates a describe document, returning
// the compiled input and output schemas of each tool.
func parseDescription(raw []byte) (Description, []*tool.Schema, []*tool.Schema, error) {
	bad := func(format string, args ...any) (Description, []*tool.Schema, []*tool.Schema, error) {
		return Description{}, nil, nil, fmt.Errorf("%w: %s", ErrDescribe, fmt.Sprintf(format, args...))
	}
	if len(raw) > MaxDescribe {
		return bad("%d bytes, more than the %d allowed", len(raw), MaxDescribe)
	}
	var d Description
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&d); err != nil {
		return bad("not a JSON object {\"tools\":[...]}: %v", err)
	}
	if dec.More() {
		return bad("trailing data after the JSON object")
	}
	if len(d.Tools) == 0 {
		return bad("no tools")
	}
	if len(d.Tools) > maxTools {
		return bad("%d tools, more than the %d a module may offer", len(d.Tools), maxTools)
	}
	if _, err := d.RequestedGrants(); err != nil {
		return bad("capabilities: %v", err)
	}
	if len(d.Prompts) > maxPrompts || len(d.Resources)+len(d.ResourceTemplates) > maxResources {
		return bad("%d prompts and %d resources, more than the %d and %d allowed", len(d.Prompts), len(d.Resources)+len(d.ResourceTemplates), maxPrompts, maxResources)
	}
	prompts := map[string]bool{}
	for i, p := range d.Prompts {
		if p.Name == "" || prompts[p.Name] {
			return bad("prompt %d: a name of its own is required, got %q", i, p.Name)
		}
		prompts[p.Name] = true
	}
	for i, r := range d.Resources {
		if r.URI == "" || r.Name == "" {
			return bad("resource %d: uri and name are required", i)
		}
	}
	for i, r := range d.ResourceTemplates {
		if r.URITemplate == "" || r.Name == "" {
			return bad("resource template %d: uriTemplate and name are required", i)
		}
	}
	in := make([]*tool.Schema, len(d.Tools))
	out := make([]*tool.Schema, len(d.Tools))
	seen := map[string]bool{}
	// Each schema is bounded, and so is their sum: a module of many tools
	// must not hold what no single schema may.
	objects := 0
	for _, t := range d.Tools {
		objects += tool.SchemaObjects(t.InputSchema) + tool.SchemaObjects(t.OutputSchema)
	}
	if objects > maxDescribeObjects {
		return bad("its schemas hold %d objects, more than the %d allowed", objects, maxDescribeObjects)
	}
	footprint := 0
	for i, t := range d.Tools {
		if !tool.ValidName(t.Name) {
			return bad("tool %d: invalid name %q: want 1-64 letters, digits, '_' or '-'", i, t.Name)
		}
		if seen[t.Name] {
			return bad("tool %q described twice", t.Name)
		}
		seen[t.Name] = true
		if t.Export != "" && (len(t.Export) > 256 || t.Export == "describe" || strings.HasPrefix(t.Export, "autoagent:")) {
			return bad("tool %q: export %q is not one a tool may call", t.Name, t.Export)
		}
		s, err := tool.CompileSchema(t.InputSchema)
		if err != nil {
			return bad("tool %q: inputSchema: %v", t.Name, err)
		}
		in[i] = s
		d.Tools[i].InputSchema = s.JSON()
		footprint += s.Footprint()
		if len(bytes.TrimSpace(t.OutputSchema)) > 0 {
			if out[i], err = tool.CompileSchema(t.OutputSchema); err != nil {
				return bad("tool %q: outputSchema: %v", t.Name, err)
			}
			footprint += out[i].Footprint()
		}
		if footprint > maxDescribeFootprint {
			return bad("its compiled schemas hold more than %d MiB (at tool %q)", maxDescribeFootprint>>20, t.Name)
		}
	}
	return d, in, out, nil
}

// acceptsAnyObject reports whether an input schema accepts every JSON
// object and nothing else: {"type":"object"}, optionally with no
// properties, nothing required, additionalProperties true, and
// annotations.
func acceptsAnyObject(schema json.RawMessage) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(schema, &m) != nil {
		return false
	}
	for k, v := range m {
		ok := false
		switch k {
		case "type":
			ok = string(v) == `"object"`
		case "properties":
			var p map[string]json.RawMessage
			ok = json.Unmarshal(v, &p) == nil && p != nil && len(p) == 0
		case "required":
			var r []string
			ok = json.Unmarshal(v, &r) == nil && len(r) == 0
		case "additionalProperties":
			ok = string(v) == "true"
		case "$schema", "title", "description", "$comment":
			ok = true
		}
		if !ok {
			return false
		}
	}
	return m["type"] != nil
}
