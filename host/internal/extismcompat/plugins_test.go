package extismcompat_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// extismFixtures returns the directory of Extism's own test plugins
// (shared/fixtures/extism above the working directory), skipping t where
// it is absent.
func extismFixtures(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "shared", "fixtures", "extism")
		if _, err := os.Stat(filepath.Join(p, "README.md")); err == nil {
			return p
		}
		if filepath.Dir(dir) == dir {
			t.Skipf("Extism's test plugins not found: no shared/fixtures/extism above %s", wd)
		}
	}
}

// The go-sdk tests' host functions (extism_test.go: TestHost_simple,
// TestHost_memory, TestHost_multiple), and the same written for this host.
func theirFunctions() []extism.HostFunction {
	mult := extism.NewHostFunctionWithStack("mult", func(_ context.Context, _ *extism.CurrentPlugin, stack []uint64) {
		stack[0] = extism.EncodeI32(extism.DecodeI32(stack[0]) * extism.DecodeI32(stack[1]))
	}, []extism.ValueType{extism.ValueTypePTR, extism.ValueTypePTR}, []extism.ValueType{extism.ValueTypePTR})
	upper := extism.NewHostFunctionWithStack("to_upper", func(_ context.Context, p *extism.CurrentPlugin, stack []uint64) {
		b, err := p.ReadBytes(stack[0])
		if err != nil {
			panic(err)
		}
		p.Free(stack[0])
		if stack[0], err = p.WriteBytes(bytes.ToUpper(b)); err != nil {
			panic(err)
		}
	}, []extism.ValueType{extism.ValueTypePTR}, []extism.ValueType{extism.ValueTypePTR})
	upper.SetNamespace("host")
	colour := func(name, prefix string) extism.HostFunction {
		return extism.NewHostFunctionWithStack(name, func(_ context.Context, p *extism.CurrentPlugin, stack []uint64) {
			s, err := p.ReadString(stack[0])
			if err != nil {
				panic(err)
			}
			if stack[0], err = p.WriteString(prefix + s); err != nil {
				panic(err)
			}
		}, []extism.ValueType{extism.ValueTypePTR}, []extism.ValueType{extism.ValueTypePTR})
	}
	return []extism.HostFunction{mult, upper, colour("hostGreenMessage", "🟢:"), colour("hostPurpleMessage", "🟣:")}
}

func ourFunctions() []host.Function {
	ptr := api.ValueTypeI64
	colour := func(name, prefix string) host.Function {
		return host.Function{Name: name, Params: []api.ValueType{ptr}, Results: []api.ValueType{ptr},
			Func: func(_ context.Context, c *host.Caller, stack []uint64) error {
				s, err := c.ReadString(stack[0])
				if err != nil {
					return err
				}
				stack[0], err = c.WriteString(prefix + s)
				return err
			}}
	}
	return []host.Function{
		{Name: "mult", Params: []api.ValueType{ptr, ptr}, Results: []api.ValueType{ptr},
			Func: func(_ context.Context, _ *host.Caller, stack []uint64) error {
				stack[0] = api.EncodeI32(api.DecodeI32(stack[0]) * api.DecodeI32(stack[1]))
				return nil
			}},
		{Namespace: "host", Name: "to_upper", Params: []api.ValueType{ptr}, Results: []api.ValueType{ptr},
			Func: func(_ context.Context, c *host.Caller, stack []uint64) error {
				b, err := c.Read(stack[0])
				if err != nil {
					return err
				}
				c.Free(stack[0])
				stack[0], err = c.Write(bytes.ToUpper(b))
				return err
			}},
		colour("hostGreenMessage", "🟢:"),
		colour("hostPurpleMessage", "🟣:"),
	}
}

// TestExtismPlugins runs Extism's own test plugins, built with the
// official PDKs, under extism/go-sdk and under this host with the same
// inputs, config and host functions: each export is a tool of a sidecar
// (ToolDescription.Export), and its result is what the SDK returns.
// Where this host differs on purpose, host/ABI.md lists it ("Differences
// from Extism") and want holds this host's answer.
func TestExtismPlugins(t *testing.T) {
	t.Parallel()
	dir := extismFixtures(t)
	ctx := context.Background()
	// A directory for the fs plugins, which read /mnt/test.txt, and a
	// server for the HTTP ones.
	files := t.TempDir()
	if err := os.WriteFile(filepath.Join(files, "test.txt"), []byte("hello world!"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		_, _ = w.Write([]byte("<p>hello</p>"))
	}))
	defer srv.Close()
	srvHost := strings.TrimPrefix(srv.URL, "http://")
	getReq, _ := json.Marshal(map[string]string{"url": srv.URL})
	for _, c := range []struct {
		name, file, export, input string
		config                    map[string]string
		grants                    []string
		paths                     map[string]string // Extism's allowed_paths
		hosts                     []string          // Extism's allowed_hosts
		headers, reuse            bool
		want                      string // this host's result where it differs on purpose
		loadErr                   string // this host refuses the module at load
		theirErr                  string // go-sdk's error, where want differs from it on purpose
		lib                       string // a module go-sdk links to file by the name lib
	}{
		{name: "alloc", file: "alloc.wasm", export: "run_test"},
		{name: "noop", file: "noop.wasm", export: "run_test"},
		{name: "hello", file: "hello.wasm", export: "run_test"},
		{name: "fail", file: "fail.wasm", export: "run_test"},
		{name: "config", file: "config.wasm", export: "run_test", config: map[string]string{"thing": "a value"}},
		{name: "count_vowels", file: "count_vowels.wasm", export: "count_vowels", input: "hello world"},
		{name: "count_vowels_std", file: "count_vowels_std.wasm", export: "_start", input: "hello world"},
		{name: "std_command", file: "std_command.wasm", export: "_start", input: "ben"},
		{name: "exit 0", file: "exit.wasm", export: "_start", config: map[string]string{"code": "0"}},
		{name: "exit 500", file: "exit.wasm", export: "_start", config: map[string]string{"code": "500"},
			want: "tool t exited with status 500"},
		{name: "host", file: "host.wasm", export: "run_test", grants: []string{"host:extism:host/user.mult"}},
		{name: "host_memory", file: "host_memory.wasm", export: "run_test", input: "Frodo", grants: []string{"host:host.to_upper"}},
		{name: "say_green", file: "host_multiple.wasm", export: "say_green", input: "John Doe",
			grants: []string{"host:extism:host/user.hostGreenMessage", "host:extism:host/user.hostPurpleMessage"}},
		{name: "say_purple", file: "host_multiple.wasm", export: "say_purple", input: "Jane Doe",
			grants: []string{"host:extism:host/user.hostGreenMessage", "host:extism:host/user.hostPurpleMessage"}},
		{name: "input_offset", file: "input_offset.wasm", export: "input_offset_length", input: "hello world"},
		{name: "log", file: "log.wasm", export: "run_test"},
		{name: "println", file: "println.wasm", export: "run_test"},
		{name: "replace", file: "replace.wasm", export: "run_test", input: "hello"},
		{name: "var", file: "var.wasm", export: "run_test"},
		{name: "hello_haskell", file: "hello_haskell.wasm", export: "testing", input: "John", config: map[string]string{"greeting": "Howdy"}},
		{name: "exit -1", file: "exit.wasm", export: "_start", config: map[string]string{"code": "-1"},
			want: "tool t exited with status 4294967295"},
		{name: "exit abc", file: "exit.wasm", export: "_start", config: map[string]string{"code": "abc"},
			want: "tool t exited with status"},
		{name: "var twice", file: "var.wasm", export: "run_test", reuse: true},
		{name: "fs", file: "fs.wasm", export: "run_test", paths: map[string]string{files: "/mnt"}, grants: []string{"fs.write:" + files + "=/mnt"}},
		{name: "fs_std", file: "fs_std.wasm", export: "run_test", paths: map[string]string{files: "/mnt"}, grants: []string{"fs.write:" + files + "=/mnt"}},
		// TinyGo opens files read-write: a read-only mount fails it in
		// both hosts.
		{name: "fs read-only", file: "fs.wasm", export: "run_test", paths: map[string]string{"ro:" + files: "/mnt"}, grants: []string{"fs.read:" + files + "=/mnt"}},
		{name: "try_read", file: "read_write.wasm", export: "try_read", config: map[string]string{"path": "/mnt/test.txt"},
			paths: map[string]string{"ro:" + files: "/mnt"}, grants: []string{"fs.read:" + files + "=/mnt"}},
		{name: "try_write read-only", file: "read_write.wasm", export: "try_write", input: "hello hello!", config: map[string]string{"path": "/mnt/test.txt"},
			paths: map[string]string{"ro:" + files: "/mnt"}, grants: []string{"fs.read:" + files + "=/mnt"},
			want: "Failed to write file: Read-only file system (os error 69)"},
		{name: "http_headers", file: "http_headers.wasm", export: "http_get", input: string(getReq),
			hosts: []string{"127.0.0.1"}, headers: true, grants: []string{"net:" + srvHost}},
		// An import without its grant loads in both hosts; its call
		// fails in both (issue 44 item 4).
		{name: "http_headers not granted", file: "http_headers.wasm", export: "http_get", input: string(getReq),
			want:     "net: call of extism:host/env.http_request refused: the module was not granted net:HOST",
			theirErr: "HTTP request to '" + srv.URL + "' is not allowed"},
		{name: "http not granted", file: "http.wasm", export: "run_test", grants: []string{"net:example.com"},
			want: "net: request to https://jsonplaceholder.typicode.com/todos/1 refused"},
		{name: "linked modules", file: "main.wasm", export: "run_test", lib: "lib.wasm",
			loadErr: `imports the host function lib.capitalize, which this host does not provide`},
		{name: "sleep past the time limit", file: "sleep.wasm", export: "run_test", config: map[string]string{"duration": "3"},
			want: "time limit of 300ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			wasm, err := os.ReadFile(filepath.Join(dir, c.file))
			if err != nil {
				t.Fatal(err)
			}
			mods := []extism.Wasm{extism.WasmData{Data: wasm}}
			if c.lib != "" {
				lib, err := os.ReadFile(filepath.Join(dir, c.lib))
				if err != nil {
					t.Fatal(err)
				}
				mods = []extism.Wasm{extism.WasmData{Data: lib, Name: "lib"}, extism.WasmData{Data: wasm, Name: "main"}}
			}
			m := extism.Manifest{Wasm: mods, Config: c.config,
				AllowedPaths: c.paths, AllowedHosts: c.hosts}
			if c.config["duration"] != "" {
				m.Timeout = 300
			}
			plugin, err := extism.NewPlugin(ctx, m, extism.PluginConfig{EnableWasi: true, RuntimeConfig: wazero.NewRuntimeConfigInterpreter(),
				EnableHttpResponseHeaders: c.headers}, theirFunctions())
			if err != nil {
				t.Fatal(err)
			}
			defer plugin.Close(ctx)
			rc, theirs, theirErr := plugin.Call(c.export, []byte(c.input))
			if c.reuse && theirErr == nil {
				rc, theirs, theirErr = plugin.Call(c.export, []byte(c.input))
			}

			h := newHost(t, host.Options{Functions: ourFunctions()})
			sidecar := `{"tools":[{"name":"t","description":"Extism's ` + c.name + `","inputSchema":{"type":"object"},"export":"` + c.export + `"}]}`
			// Extism's manifest sets its timeout for the sleeping cases
			// only; so does the host's limit. The first call makes its own
			// instance (the pool waits for it), a runtime's start-up
			// included, which a loaded machine took past 300 ms.
			timeout := 10 * time.Second
			if c.config["duration"] != "" {
				timeout = 300 * time.Millisecond
			}
			l, err := h.Load(ctx, host.Module{Name: c.name, Bytes: wasm, Sidecar: []byte(sidecar), Grants: grants(t, c.grants...), Config: c.config,
				Reuse: c.reuse, Limits: host.Limits{Timeout: timeout}})
			if c.loadErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.loadErr) {
					t.Fatalf("load: %v, want %q (extism: rc %d, %v)", err, c.loadErr, rc, theirErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close(ctx)
			args, _ := json.Marshal(map[string]string{"input": c.input})
			res := call(t, l, "t", string(args))
			if c.reuse && !res.IsError {
				res = call(t, l, "t", string(args))
			}

			switch {
			case c.want != "":
				if !strings.Contains(res.Text(), c.want) {
					t.Errorf("host: %+v, want %q (extism: rc %d, %q, %v)", res, c.want, rc, theirs, theirErr)
				}
				if c.theirErr != "" && (theirErr == nil || !strings.Contains(theirErr.Error(), c.theirErr)) {
					t.Errorf("extism: rc %d, %q, %v, want the error %q", rc, theirs, theirErr, c.theirErr)
				}
			case theirErr == nil && rc != 0:
				if !res.IsError || res.Text() != fmt.Sprintf("tool t returned code %d", rc) {
					t.Errorf("extism returned %d; host: %+v", rc, res)
				}
			case theirErr != nil:
				if !res.IsError || res.Text() != theirErr.Error() {
					t.Errorf("extism failed (rc %d, %v); host: %+v", rc, theirErr, res)
				}
			case res.IsError || res.Text() != string(theirs):
				t.Errorf("host: %+v\nextism: %q", res, theirs)
			}
			t.Logf("extism rc %d %q %v; host %q", rc, theirs, theirErr, res.Text())
		})
	}
}

// newHost is a host for one test, its kv stores in the test's directory
// and its compiled code in the package's cache.
func newHost(t testing.TB, opts host.Options) *host.Host {
	t.Helper()
	opts.CacheDir, opts.KVDir = cacheDir, t.TempDir()
	h, err := host.New(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h
}

func grants(t testing.TB, ss ...string) []manifest.Grant {
	t.Helper()
	gs, err := manifest.ParseGrants(ss)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

func call(t testing.TB, l *host.Loaded, name, args string) tool.Result {
	t.Helper()
	tl, ok := l.Tool(name)
	if !ok {
		t.Fatalf("module %s has no tool %s", l.Name(), name)
	}
	res, err := tl.Call(context.Background(), tool.Call{ID: "call-1", Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s: infrastructure error: %v", name, err)
	}
	return res
}

// cacheDir is the compiled-code cache the package's hosts share.
var cacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "extismcompat-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cacheDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
