package pdk

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// The module's tools and the capabilities it asks for. They are filled by
// init functions before the host's first call and only read afterwards (a
// module instance runs one call at a time), so no lock is needed.
var (
	tools        []*Tool
	capabilities []string
)

// Register makes tools visible to the host. Call it from an init function.
// A nil tool, a duplicate name or a tool that NewTool could not build is
// reported by describe.
func Register(ts ...*Tool) {
	tools = append(tools, ts...)
}

// RequestCapabilities declares the grants the module's tools need, such as
// "net:api.example.com", "fs.read:/data" or "kv:notes", or a bare kind
// ("net", "fs.read", "fs.write", "fs.workspace", "env", "kv", "tools") when the value is the
// operator's choice, as for a generic fetch or file tool. The host shows
// them to the operator who approves the module, and refuses to grant more
// than was asked for. Asking does not grant anything.
func RequestCapabilities(grants ...string) {
	capabilities = append(capabilities, grants...)
}

// ErrNoTools is returned by [Describe] for a module that registered no tool.
var ErrNoTools = errors.New("pdk: no tool registered (call pdk.Register in an init function)")

// Describe returns the module's describe document:
// {"tools":[{"name","description","inputSchema",...}],"capabilities":[...]}.
// It fails when a tool is misdeclared, with an error naming the tool.
func Describe() ([]byte, error) {
	if len(tools) == 0 {
		return nil, ErrNoTools
	}
	type toolDoc struct {
		Name         string       `json:"name"`
		Description  string       `json:"description"`
		InputSchema  *schema      `json:"inputSchema"`
		OutputSchema *schema      `json:"outputSchema,omitempty"`
		Annotations  *Annotations `json:"annotations,omitempty"`
	}
	doc := struct {
		Tools        []toolDoc `json:"tools"`
		Capabilities []string  `json:"capabilities,omitempty"`
	}{Capabilities: capabilities}
	seen := map[string]bool{}
	for i, t := range tools {
		if t == nil {
			return nil, fmt.Errorf("pdk: tool %d registered is nil", i)
		}
		if t.err != nil {
			return nil, t.err
		}
		if seen[t.name] {
			return nil, fmt.Errorf("pdk: two tools are named %q", t.name)
		}
		seen[t.name] = true
		doc.Tools = append(doc.Tools, toolDoc{t.name, t.description, t.input, t.output, t.annotations})
	}
	return marshal(doc)
}

// Call runs one call of the module: input is the call document
// {"params":{"name","arguments"}}, the result is the result document
// {"content":[...],"structuredContent"?,"isError"?}. It never fails: every
// problem is an error result. The host calls it through the module's
// `call` export; tests may call it directly.
func Call(input []byte) []byte {
	out, err := appendResult(nil, dispatch(input))
	if err != nil {
		out, _ = appendResult(nil, Errorf("pdk: encoding the result: %v", err))
	}
	return out
}

func dispatch(input []byte) (res Result) {
	name, args, err := parseCall(input)
	if err != nil {
		return Errorf("%s", err.Error())
	}
	var t *Tool
	for _, c := range tools {
		if c != nil && c.err == nil && c.name == name {
			t = c
			break
		}
	}
	if t == nil {
		names := make([]string, 0, len(tools))
		for _, c := range tools {
			if c != nil && c.err == nil {
				names = append(names, c.name)
			}
		}
		return Errorf("unknown tool \"%s\" (this module offers: %s)", name, strings.Join(names, ", "))
	}
	defer func() {
		if p := recover(); p != nil {
			res = Errorf("tool %s panicked: %v", t.name, p)
		}
	}()
	return t.run(context.Background(), args)
}

// parseCall extracts the tool name and arguments from a call document, as
// decoding it into maps of json.RawMessage would (the last of duplicate
// keys wins) in one scan after the validity check. Absent or null
// arguments mean the empty object.
func parseCall(input []byte) (name string, args []byte, err error) {
	if !jsonValid(input) {
		return "", nil, errNotObject
	}
	v := validator{doc: input}
	params, ok := v.member(v.ws(0), "params")
	if !ok || params < 0 || input[params] != '{' {
		return "", nil, errNotObject
	}
	at, _ := v.member(params, "name")
	if at < 0 || input[at] != '"' {
		return "", nil, errNotObject
	}
	name = v.str(at, v.stringEnd(at))
	if at, _ = v.member(params, "arguments"); at >= 0 {
		args = input[at:v.skip(at)]
	}
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	return name, args, nil
}
