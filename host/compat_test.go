package host

import (
	"context"
	"encoding/json"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
)

// TestExtismCompatibility runs the same plugins under Extism's own Go SDK
// and under this host: the same input gives the same output, so a plugin
// written for Extism runs here unchanged (and ours run there).
func TestExtismCompatibility(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := newTestHost(t, Options{})
	for _, c := range []struct{ file, tool, args string }{
		{"echo.wasm", "echo", `{"a":[1,2,{"b":"c\"d"}],"e":"é"}`},
		{"echo.wasm", "spin", `{"n":1000}`},
		{"goecho.wasm", "echo", `{"x":"y"}`},
		{"goecho.wasm", "upper", `{"s":"shout"}`},
	} {
		t.Run(c.file+"/"+c.tool, func(t *testing.T) {
			plugin, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasmFile(t, c.file)}}},
				// The interpreter runs the plugins as the compiler would,
				// without compiling the Go guest a second time.
				extism.PluginConfig{EnableWasi: true, RuntimeConfig: wazero.NewRuntimeConfigInterpreter()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer plugin.Close(ctx)
			var doc struct {
				Params struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"params"`
			}
			doc.Params.Name, doc.Params.Arguments = c.tool, json.RawMessage(c.args)
			input, _ := json.Marshal(doc)
			rc, theirs, err := plugin.Call("call", input)
			if err != nil || rc != 0 {
				t.Fatalf("extism: rc %d, %v", rc, err)
			}
			_, theirDescribe, err := plugin.Call("describe", nil)
			if err != nil {
				t.Fatal(err)
			}

			l := load(t, h, c.file, Module{})
			inst, err := l.newInstance(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			defer inst.close()
			ours, failure, err := inst.run(ctx, c.tool, callInput{input})
			if err != nil || failure != "" {
				t.Fatalf("host: %v %s", err, failure)
			}
			if string(ours) != string(theirs) {
				t.Errorf("call output differs:\n host:   %s\n extism: %s", ours, theirs)
			}
			var d Description
			if err := json.Unmarshal(theirDescribe, &d); err != nil || len(d.Tools) != len(l.Describe().Tools) {
				t.Errorf("describe under extism: %s (%v)", theirDescribe, err)
			}
		})
	}
}
