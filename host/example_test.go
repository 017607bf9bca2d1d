package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// Load a module and call one of its tools.
func Example() {
	ctx := context.Background()
	h, err := host.New(ctx, host.Options{NoDiskCache: true})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)

	wasm, err := os.ReadFile("../testdata/wasm/echo.wasm")
	if err != nil {
		log.Fatal(err)
	}
	mod, err := h.Load(ctx, host.Module{Name: "echo", Bytes: wasm})
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Close(ctx)

	echo, _ := mod.Tool("echo")
	res, err := echo.Call(ctx, tool.Call{Name: "echo", Arguments: json.RawMessage(`{"city":"Oslo"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output: {"city":"Oslo"}
}

// A call past a limit ends with an error result naming the limit; the host
// keeps serving.
func ExampleLimits() {
	ctx := context.Background()
	h, _ := host.New(ctx, host.Options{NoDiskCache: true})
	defer h.Close(ctx)
	wasm, _ := os.ReadFile("../testdata/wasm/loop.wasm")
	mod, err := h.Load(ctx, host.Module{Name: "loop", Bytes: wasm, Limits: host.Limits{Timeout: 100 * time.Millisecond}})
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Close(ctx)
	loop, _ := mod.Tool("loop")
	res, _ := loop.Call(ctx, tool.Call{Name: "loop"})
	fmt.Println(res.IsError, res.Text())
	// Output: true tool exceeded its time limit of 100ms
}

// A module that imports a function the host does not provide does not
// load.
func ExampleImportError() {
	ctx := context.Background()
	h, _ := host.New(ctx, host.Options{NoDiskCache: true})
	defer h.Close(ctx)
	wasm, _ := os.ReadFile("../testdata/wasm/unknownimport.wasm")
	_, err := h.Load(ctx, host.Module{Name: "unknownimport", Bytes: wasm})
	fmt.Println(err)
	// Output:
	// host: module "unknownimport" imports the host function env.system, which this host does not provide (the application registers its host functions in host.Options.Functions)
}

// A module that imports a capability it was not granted loads, and each
// call of the import is refused: grants are asked at call time, as
// Extism does.
func ExampleDeniedError() {
	ctx := context.Background()
	h, _ := host.New(ctx, host.Options{NoDiskCache: true})
	defer h.Close(ctx)
	wasm, _ := os.ReadFile("../testdata/wasm/fetch.wasm")
	mod, err := h.Load(ctx, host.Module{Name: "fetch", Bytes: wasm})
	fmt.Println(err)
	t, _ := mod.Tool("fetch")
	res, _ := t.Call(ctx, tool.Call{Name: "fetch", Arguments: json.RawMessage(`{"url":"https://api.example.com/"}`)})
	fmt.Println(res.IsError, res.Text())
	_ = mod.Close(ctx)

	g, _ := manifest.ParseGrant("net:api.example.com")
	mod, err = h.Load(ctx, host.Module{Name: "fetch", Bytes: wasm, Grants: []manifest.Grant{g}})
	fmt.Println(err == nil, len(mod.Tools()), tool.FlagsOf(mod.Tools()[0]).Egress)
	_ = mod.Close(ctx)
	// Output:
	// <nil>
	// true net: call of extism:host/env.http_request refused: the module was not granted net:HOST; it loads without the grant, and each call of the function is refused until it is approved with one
	// true 1 true
}

// OnCall receives a record of every sandboxed call, for tracing.
func ExampleOptions_onCall() {
	ctx := context.Background()
	h, _ := host.New(ctx, host.Options{NoDiskCache: true, OnCall: func(_ context.Context, r host.CallRecord) {
		fmt.Println(r.Module, r.Tool, r.Outcome, r.MemoryPeak > 0)
	}})
	defer h.Close(ctx)
	wasm, _ := os.ReadFile("../testdata/wasm/trap.wasm")
	mod, _ := h.Load(ctx, host.Module{Name: "trap", Bytes: wasm})
	defer mod.Close(ctx)
	t, _ := mod.Tool("trap")
	res, _ := t.Call(ctx, tool.Call{Name: "trap"})
	fmt.Println(res.Text())
	// Output:
	// trap trap trap true
	// tool crashed: unreachable
}

// The application offers a Go function to modules; one imports it only
// when granted host:NAMESPACE.NAME. Strings travel as Extism memory blocks.
func ExampleFunction() {
	ctx := context.Background()
	upper := host.Function{
		Namespace: "app", Name: "upper",
		Params: []api.ValueType{api.ValueTypeI64}, Results: []api.ValueType{api.ValueTypeI64},
		Description: "Upper-cases a string.", Local: true, Trusted: true, Idempotent: true,
		Func: func(ctx context.Context, c *host.Caller, stack []uint64) error {
			s, err := c.ReadString(stack[0])
			if err != nil {
				return err
			}
			stack[0], err = c.WriteString(strings.ToUpper(s))
			return err
		},
	}
	mult := host.Function{
		Name:   "mult", // in extism:host/user, where Extism's PDKs import from
		Params: []api.ValueType{api.ValueTypeI64, api.ValueTypeI64}, Results: []api.ValueType{api.ValueTypeI64},
		Func: func(_ context.Context, _ *host.Caller, stack []uint64) error {
			stack[0] *= stack[1]
			return nil
		},
	}
	h, err := host.New(ctx, host.Options{NoDiskCache: true, Functions: []host.Function{upper, mult}})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close(ctx)
	wasm, _ := os.ReadFile("../testdata/wasm/hostfn.wasm")
	grants, _ := manifest.ParseGrants([]string{upper.Grant().String(), mult.Grant().String()})
	mod, err := h.Load(ctx, host.Module{Name: "hostfn", Bytes: wasm, Grants: grants})
	if err != nil {
		log.Fatal(err)
	}
	defer mod.Close(ctx)
	t, _ := mod.Tool("upper")
	res, _ := t.Call(ctx, tool.Call{Name: "upper", Arguments: json.RawMessage(`{"s":"shout"}`)})
	fmt.Println(res.Text())
	// Output: SHOUT
}
