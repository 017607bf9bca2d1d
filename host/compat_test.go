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
		{"state.wasm", "exit0", `{}`}, // output, then proc_exit(0): a success
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
			// describe first: a call that ends in proc_exit closes the
			// SDK's module.
			_, theirDescribe, err := plugin.Call("describe", nil)
			if err != nil {
				t.Fatal(err)
			}
			rc, theirs, err := plugin.Call("call", input)
			if err != nil || rc != 0 {
				t.Fatalf("extism: rc %d, %v", rc, err)
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

// TestExtismCompatibilityFailures: the ways a call fails under Extism's Go
// SDK fail here too: an error set with a non-zero return and an error set
// with a return of 0, with the same message; proc_exit(3) after an error
// set, where the SDK reports wazero's "module closed with exit_code(3)" and
// this host the guest's error (host/ABI.md, "Differences from Extism").
func TestExtismCompatibilityFailures(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "state.wasm", Module{})
	for _, tool := range []string{"fail", "exit3", "errzero"} {
		t.Run(tool, func(t *testing.T) {
			plugin, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasmFile(t, "state.wasm")}}},
				extism.PluginConfig{EnableWasi: true, RuntimeConfig: wazero.NewRuntimeConfigInterpreter()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer plugin.Close(ctx)
			input := []byte(`{"params":{"name":"` + tool + `","arguments":{}}}`)
			_, _, theirErr := plugin.Call("call", input)
			if theirErr == nil {
				t.Fatalf("extism: %s succeeded", tool)
			}
			res := call(t, l, tool, `{}`)
			want := theirErr.Error()
			if tool == "exit3" {
				if want != "module closed with exit_code(3)" {
					t.Errorf("extism's error changed: %q", want)
				}
				want = "exit3: gave up"
			}
			if !res.IsError || res.Text() != want {
				t.Errorf("host: %+v; extism's error: %q", res, theirErr)
			}
		})
	}
}

// TestInitialisers: a new instance runs the initialisers an Extism plugin
// exports (host/ABI.md 1.2): `_initialize` only without parameters (here
// it takes one, so `__wasm_call_ctors` runs instead), then
// `hs_init(argc, argv)`; inits.wasm records each one's turn. The
// initialisers are found once per module, so a second instance, fresh
// from the same compiled module, runs them too.
func TestInitialisers(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "inits.wasm", Module{})
	for i := range 2 {
		inst, err := l.newInstance(t.Context(), false)
		if err != nil {
			t.Fatal(err)
		}
		out, failure, err := inst.run(t.Context(), "inits", callInput{})
		inst.close()
		if err != nil || failure != "" {
			t.Fatalf("instance %d: %v %s", i, err, failure)
		}
		if string(out) != "ch" {
			t.Errorf("instance %d ran the initialisers %q, want %q (__wasm_call_ctors, then hs_init)", i, out, "ch")
		}
	}
}
