package conformance_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/google/go-cmp/cmp"
	"github.com/tetratelabs/wazero"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// kvModule reads build/kv.LANG.wasm, the kv conformance module of a
// language (SPEC.md, "The kv module"), skipping the test when it is not
// built.
func kvModule(t *testing.T, lang string) []byte {
	t.Helper()
	p := filepath.Join("build", "kv."+lang+".wasm")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Skipf("%s not built: run `make pdk-conformance` (needs the toolchains of .ci/install.d/pdk.sh)", p)
	}
	return b
}

// loadKV loads a language's kv module into h with grants.
func loadKV(t *testing.T, h *host.Host, lang string, grants ...string) (*host.Loaded, error) {
	t.Helper()
	g, err := manifest.ParseGrants(grants)
	if err != nil {
		t.Fatal(err)
	}
	l, err := h.Load(context.Background(), host.Module{Name: "kv_" + lang, Bytes: kvModule(t, lang), Grants: g})
	if err == nil {
		t.Cleanup(func() { l.Close(context.Background()) })
	}
	return l, err
}

// kvCall calls one tool of a loaded kv module and returns its result as
// the model would see it: the text, prefixed with "error: " for an error
// result. For a JSON result it also checks that the text and the
// structured content are the same document.
func kvCall(t *testing.T, l *host.Loaded, name string, args map[string]string) string {
	t.Helper()
	raw := json.RawMessage("{}")
	if args != nil {
		var err error
		if raw, err = json.Marshal(args); err != nil {
			t.Fatal(err)
		}
	}
	tl, ok := l.Tool(name)
	if !ok {
		t.Fatalf("the module has no tool %s", name)
	}
	res, err := tl.Call(context.Background(), tool.Call{Name: name, Arguments: raw})
	if err != nil {
		t.Fatalf("%s(%s): %v", name, raw, err)
	}
	if res.IsError {
		return "error: " + res.Text()
	}
	if res.StructuredContent != nil && string(res.StructuredContent) != res.Text() {
		t.Errorf("%s(%s): text %s differs from structured content %s", name, raw, res.Text(), res.StructuredContent)
	}
	return res.Text()
}

type kvStep struct {
	tool string
	args map[string]string
	want string
}

// Keys and values that take every path of the bindings' JSON handling:
// the host lists keys as Go's json.Marshal writes them (<, > and & as
// \u003c..., U+2028 escaped, control characters as \u00XX), and the
// modules write them back as SPEC.md rule 8 says.
const (
	oddKey   = "note/<ü>\"\\\u2028😀"
	ctrlKey  = "note/\x01tab\t"
	oddValue = "héllo \"wörld\" <&> \u2028 \x00"
)

var longValue = strings.Repeat("0123456789", 1000) + "xyz"

// kvScript is the conversation every language's kv module must hold with
// the host, granted kv:caps and starting from an empty store. Each call
// runs in a fresh instance (the host's default), so everything read back
// went through the host's store.
var kvScript = []kvStep{
	{"kv_keys", nil, `{"keys":[]}`},
	{"kv_get", map[string]string{"key": "note/a"}, `{"found":false,"value":""}`},
	{"kv_set", map[string]string{"key": "note/b", "value": "2"}, "stored"},
	{"kv_set", map[string]string{"namespace": "caps", "key": "note/a", "value": "1"}, "stored"},
	{"kv_set", map[string]string{"namespace": "", "key": "other", "value": oddValue}, "stored"},
	{"kv_set", map[string]string{"key": oddKey, "value": longValue}, "stored"},
	{"kv_set", map[string]string{"key": ctrlKey, "value": "tab"}, "stored"},
	// "" and "caps" name the same namespace, the module's only one.
	{"kv_get", map[string]string{"key": "note/a"}, `{"found":true,"value":"1"}`},
	{"kv_get", map[string]string{"namespace": "caps", "key": "note/b"}, `{"found":true,"value":"2"}`},
	{"kv_get", map[string]string{"key": "other"}, `{"found":true,"value":"héllo \"wörld\" <&> \u2028 \u0000"}`},
	{"kv_get", map[string]string{"key": oddKey}, `{"found":true,"value":"` + longValue + `"}`},
	// Listing: byte order, by prefix.
	{"kv_keys", nil, `{"keys":["note/\u0001tab\t","note/<ü>\"\\\u2028😀","note/a","note/b","other"]}`},
	{"kv_keys", map[string]string{"prefix": ""}, `{"keys":["note/\u0001tab\t","note/<ü>\"\\\u2028😀","note/a","note/b","other"]}`},
	{"kv_keys", map[string]string{"prefix": "note/"}, `{"keys":["note/\u0001tab\t","note/<ü>\"\\\u2028😀","note/a","note/b"]}`},
	{"kv_keys", map[string]string{"namespace": "caps", "prefix": "note/<ü"}, `{"keys":["note/<ü>\"\\\u2028😀"]}`},
	{"kv_keys", map[string]string{"prefix": "note/a"}, `{"keys":["note/a"]}`},
	{"kv_keys", map[string]string{"prefix": "other/"}, `{"keys":[]}`},
	// Overwrite, then delete (twice: a missing key is not an error).
	{"kv_set", map[string]string{"key": "note/a", "value": "one"}, "stored"},
	{"kv_get", map[string]string{"key": "note/a"}, `{"found":true,"value":"one"}`},
	{"kv_delete", map[string]string{"key": "note/a"}, "deleted"},
	{"kv_delete", map[string]string{"namespace": "caps", "key": "note/a"}, "deleted"},
	{"kv_get", map[string]string{"key": "note/a"}, `{"found":false,"value":""}`},
	{"kv_delete", map[string]string{"key": oddKey}, "deleted"},
	{"kv_keys", map[string]string{"prefix": "note/"}, `{"keys":["note/\u0001tab\t","note/b"]}`},
	// An empty value is a value: it reads back as found, not as absent.
	{"kv_set", map[string]string{"key": "empty", "value": ""}, "stored"},
	{"kv_get", map[string]string{"key": "empty"}, `{"found":true,"value":""}`},
	{"kv_delete", map[string]string{"key": "empty"}, "deleted"},
	{"kv_get", map[string]string{"key": "empty"}, `{"found":false,"value":""}`},
	// A namespace the module was not granted.
	{"kv_get", map[string]string{"namespace": "other", "key": "a"}, `error: kv: kv_get in namespace "other" refused: the module has no kv:other grant`},
	{"kv_set", map[string]string{"namespace": "other", "key": "a", "value": "b"}, `error: kv: kv_set in namespace "other" refused: the module has no kv:other grant`},
	{"kv_delete", map[string]string{"namespace": "other", "key": "a"}, `error: kv: kv_delete in namespace "other" refused: the module has no kv:other grant`},
	{"kv_keys", map[string]string{"namespace": "other"}, `error: kv: kv_keys in namespace "other" refused: the module has no kv:other grant`},
	{"kv_keys", nil, `{"keys":["note/\u0001tab\t","note/b","other"]}`},
}

// TestKVConformance checks the kv capability of every PDK through the
// autoagent host: each language's kv module stores, reads, lists by
// prefix and deletes keys with the results of kvScript, describes itself
// with the same document, imports the four kv functions, and is refused
// without a kv grant.
func TestKVConformance(t *testing.T) {
	var describes []host.Description
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			h := newHost(t, host.Options{})
			ins, err := h.Inspect(context.Background(), "kv_"+lang, kvModule(t, lang), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ins.Needs, []string{"kv"}) {
				t.Errorf("the module needs grants %q, want only kv", ins.Needs)
			}
			for _, f := range []string{"kv_get", "kv_set", "kv_delete", "kv_keys"} {
				if !slices.Contains(ins.Imports, "extism:host/user."+f) {
					t.Errorf("the module does not import %s (imports: %q)", f, ins.Imports)
				}
			}
			describes = append(describes, ins.Description)

			// Without a kv grant it loads, and each call of a kv
			// function is refused.
			bare, err := loadKV(t, h, lang)
			if err != nil {
				t.Fatalf("loading without a kv grant: %v", err)
			}
			if got, want := kvCall(t, bare, "kv_get", map[string]string{"key": "k"}), "error: kv: call of extism:host/user.kv_get refused: the module was not granted kv:NAMESPACE"; !strings.HasPrefix(got, want) {
				t.Errorf("kv_get without a kv grant:\n got %s\nwant %s…", got, want)
			}

			l, err := loadKV(t, h, lang, "kv:caps")
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range kvScript {
				if got := kvCall(t, l, s.tool, s.args); got != s.want {
					t.Errorf("step %d, %s(%q):\n got %s\nwant %s", i, s.tool, s.args, got, s.want)
				}
			}

			// With two namespaces, the module must name one.
			two, err := loadKV(t, h, lang, "kv:caps", "kv:more")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := kvCall(t, two, "kv_keys", nil), "error: tool crashed: kv_keys: the module has 2 kv namespaces; name one"; got != want {
				t.Errorf("kv_keys without a namespace, two granted:\n got %s\nwant %s", got, want)
			}
			if got, want := kvCall(t, two, "kv_keys", map[string]string{"namespace": "caps", "prefix": "o"}), `{"keys":["other"]}`; got != want {
				t.Errorf("kv_keys in caps, two granted:\n got %s\nwant %s", got, want)
			}
		})
	}
	for i := 1; i < len(describes); i++ {
		if diff := cmp.Diff(describes[0], describes[i]); diff != "" {
			t.Errorf("the describe documents of %s and %s differ (-%s +%s):\n%s", languages[0], languages[i], languages[0], languages[i], diff)
		}
	}
}

// TestKVSharedAcrossLanguages checks that the modules of every language
// granted the same namespace share one store, byte for byte: each stores
// a key, then each lists and reads them all.
func TestKVSharedAcrossLanguages(t *testing.T) {
	h := newHost(t, host.Options{})
	loaded := map[string]*host.Loaded{}
	for _, lang := range languages {
		l, err := loadKV(t, h, lang, "kv:shared")
		if err != nil {
			t.Fatal(err)
		}
		loaded[lang] = l
		if got := kvCall(t, l, "kv_set", map[string]string{"key": "from/" + lang, "value": "written by " + lang + " ✓"}); got != "stored" {
			t.Fatalf("%s: kv_set = %s", lang, got)
		}
	}
	const want = `{"keys":["from/assemblyscript","from/c","from/go","from/rust","from/zig"]}`
	for _, lang := range languages {
		if got := kvCall(t, loaded[lang], "kv_keys", map[string]string{"prefix": "from/"}); got != want {
			t.Errorf("%s lists %s, want %s", lang, got, want)
		}
		for _, other := range languages {
			want := `{"found":true,"value":"written by ` + other + ` ✓"}`
			if got := kvCall(t, loaded[lang], "kv_get", map[string]string{"key": "from/" + other}); got != want {
				t.Errorf("%s reads %s's key as %s, want %s", lang, other, got, want)
			}
		}
	}
}

// kvStub records what a kv module passed to the kv host functions of a
// raw Extism host, which stores nothing: kv_get finds nothing and kv_keys
// returns no block.
type kvStub struct {
	calls []string
}

func (s *kvStub) functions() []extism.HostFunction {
	read := func(p *extism.CurrentPlugin, off uint64) string {
		if off == 0 {
			return "0"
		}
		b, err := p.ReadBytes(off)
		if err != nil {
			return "bad block: " + err.Error()
		}
		return strconv.Quote(string(b))
	}
	fn := func(name string, params, results int) extism.HostFunction {
		in := slices.Repeat([]extism.ValueType{extism.ValueTypeI64}, params)
		out := slices.Repeat([]extism.ValueType{extism.ValueTypeI64}, results)
		f := extism.NewHostFunctionWithStack(name, func(_ context.Context, p *extism.CurrentPlugin, stack []uint64) {
			args := make([]string, params)
			for i := range args {
				args[i] = read(p, stack[i])
			}
			s.calls = append(s.calls, name+"("+strings.Join(args, ", ")+")")
			if results > 0 {
				stack[0] = 0
			}
		}, in, out)
		f.SetNamespace("extism:host/user")
		return f
	}
	return []extism.HostFunction{fn("kv_get", 2, 1), fn("kv_set", 3, 0), fn("kv_delete", 2, 0), fn("kv_keys", 2, 1)}
}

// TestKVModuleArguments feeds the kv modules call documents the autoagent
// host would have refused (it checks arguments against the schema first),
// in a raw Extism host with stub kv functions: every language must word
// the errors as the Go PDK does, and pass the kv functions the same blocks.
func TestKVModuleArguments(t *testing.T) {
	const offers = `(this module offers: kv_set, kv_get, kv_delete, kv_keys)`
	cases := []struct {
		input, want, calls string
	}{
		{`{"params":{"name":"kv_nope"}}`, `{"content":[{"type":"text","text":"unknown tool \"kv_nope\" ` + offers + `"}],"isError":true}`, ""},
		{`{"params":{}}`, `{"content":[{"type":"text","text":"invalid call: input must be {\"params\":{\"name\":\"<tool>\",\"arguments\":{...}}}"}],"isError":true}`, ""},
		{`{"params":{"name":"kv_get","arguments":[]}}`, `{"content":[{"type":"text","text":"invalid arguments: want object, got array"}],"isError":true}`, ""},
		{`{"params":{"name":"kv_get","arguments":{"key":"a","value":"b"}}}`, `{"content":[{"type":"text","text":"invalid arguments: value: unknown property (not in the schema)"}],"isError":true}`, ""},
		{`{"params":{"name":"kv_set","arguments":{"key":1,"value":"v"}}}`, `{"content":[{"type":"text","text":"invalid arguments: key: want string, got number"}],"isError":true}`, ""},
		{`{"params":{"name":"kv_keys","arguments":{"prefix":null}}}`, `{"content":[{"type":"text","text":"invalid arguments: prefix: want string, got null"}],"isError":true}`, ""},
		{`{"params":{"name":"kv_set","arguments":{"value":"v"}}}`, `{"content":[{"type":"text","text":"invalid arguments: key: required property is missing"}],"isError":true}`, ""},
		{`{"params":{"name":"kv_set","arguments":{"key":"k"}}}`, `{"content":[{"type":"text","text":"invalid arguments: value: required property is missing"}],"isError":true}`, ""},
		{`{"params":{"name":"kv_delete","arguments":{}}}`, `{"content":[{"type":"text","text":"invalid arguments: key: required property is missing"}],"isError":true}`, ""},
		{`{"params":{"name":"kv_set","arguments":{"namespace":"","key":"k\u00e9","value":"v\u0000w"}}}`, `{"content":[{"type":"text","text":"stored"}]}`, `kv_set(0, "ké", "v\x00w")`},
		{`{"params":{"name":"kv_get","arguments":{"key":"a","namespace":"ns","key":"b"}}}`, `{"content":[{"type":"text","text":"{\"found\":false,\"value\":\"\"}"}],"structuredContent":{"found":false,"value":""}}`, `kv_get("ns", "b")`},
		{`{"params":{"name":"kv_delete","arguments":{"namespace":"ns","key":"<k>"}}}`, `{"content":[{"type":"text","text":"deleted"}]}`, `kv_delete("ns", "<k>")`},
		{`{"params":{"name":"kv_keys","arguments":null}}`, `{"content":[{"type":"text","text":"{\"keys\":[]}"}],"structuredContent":{"keys":[]}}`, `kv_keys(0, 0)`},
		{`{"params":{"name":"kv_keys","arguments":{"namespace":"ns","prefix":"p/"}}}`, `{"content":[{"type":"text","text":"{\"keys\":[]}"}],"structuredContent":{"keys":[]}}`, `kv_keys("ns", "p/")`},
	}
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			ctx := context.Background()
			stub := &kvStub{}
			p, err := extism.NewPlugin(ctx, extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: kvModule(t, lang)}}},
				extism.PluginConfig{EnableWasi: true, RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(rawCache())}, stub.functions())
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(ctx)
			for _, c := range cases {
				stub.calls = nil
				rc, out, err := p.Call("call", []byte(c.input))
				if err != nil || rc != 0 {
					t.Errorf("%s: returned %d, %v", c.input, rc, err)
					continue
				}
				if string(out) != c.want {
					t.Errorf("%s:\n got %s\nwant %s", c.input, out, c.want)
				}
				if got := strings.Join(stub.calls, "; "); got != c.calls {
					t.Errorf("%s: the module called %q, want %q", c.input, got, c.calls)
				}
			}
		})
	}
}
