package host

import (
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"
)

// hyper-mcp plugins of both interfaces, ours, written with Extism's
// official Go PDK from hyper-mcp's published templates: v1 exports
// describe and call, v2 list_tools and call_tool (and prompts, resources,
// completion).
func TestHyperMCPPlugins(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	v1 := load(t, h, "hypermcpv1go.wasm", Module{})
	if res := call(t, v1, "greet", `{"name":"Ada"}`); res.IsError || res.Text() != "Hello, Ada!" {
		t.Errorf("v1 greet: %+v", res)
	}

	v2 := load(t, h, "hypermcpv2go.wasm", Module{Grants: grants(t, "clock", "random")})
	var names []string
	for _, tl := range v2.Tools() {
		names = append(names, tl.Spec().Name)
	}
	if !slices.Equal(names, []string{"greet", "now", "token"}) {
		t.Fatalf("v2 tools %v", names)
	}
	if res := call(t, v2, "greet", `{"name":"Ada"}`); res.IsError || res.Text() != "Hello, Ada!" {
		t.Errorf("v2 greet: %+v", res)
	}
	// A time tool with the clock reports the current year; a token tool
	// called twice returns two values.
	if res := call(t, v2, "now", `{}`); res.Text() != strconv.Itoa(time.Now().Year()) {
		t.Errorf("now: %+v", res)
	}
	a, b := call(t, v2, "token", `{}`).Text(), call(t, v2, "token", `{}`).Text()
	if hex := regexp.MustCompile(`^[0-9a-f]{32}$`); !hex.MatchString(a) || !hex.MatchString(b) || a == b {
		t.Errorf("tokens %q and %q", a, b)
	}
	if res := call(t, v2, "greet", `{}`); !res.IsError {
		t.Errorf("greet without its required name: %+v", res)
	}
}
