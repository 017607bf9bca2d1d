package host

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/tool"
)

// TestClockAndRandomness: by default a module sees the real clock and
// cryptographic randomness, granted or not (a time tool knows the year, a
// token tool never repeats itself); the grants are recorded when used; a
// Deterministic host gives every module the same fixed clock and seeded
// generator, grants or not.
func TestClockAndRandomness(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{})
	for _, gs := range [][]string{nil, {"clock", "random"}} {
		l := load(t, h, "wasicmd.wasm", Module{Grants: grants(t, gs...)})
		a := call(t, l, "entropy", `{}`).Text()
		b := call(t, l, "entropy", `{}`).Text()
		var sec int64
		var random string
		if _, err := fmt.Sscanf(a, "time=%d random=%s", &sec, &random); err != nil {
			t.Fatalf("grants %v: %q: %v", gs, a, err)
		}
		if y := time.Unix(sec, 0).UTC().Year(); y != time.Now().UTC().Year() {
			t.Errorf("grants %v: the module's clock says %d", gs, y)
		}
		if a[strings.Index(a, "random="):] == b[strings.Index(b, "random="):] {
			t.Errorf("grants %v: two calls drew the same random bytes: %q", gs, a)
		}
		if r := rec.last(t); strings.Join(r.Used, ",") != strings.Join(gs, ",") {
			t.Errorf("grants %v: used = %v", gs, r.Used)
		}
	}

	for _, gs := range [][]string{nil, {"clock", "random"}} {
		var seen []string
		for range 2 {
			d, _ := newTestHost(t, Options{Deterministic: true})
			l := load(t, d, "wasicmd.wasm", Module{Grants: grants(t, gs...)})
			seen = append(seen, call(t, l, "entropy", `{}`).Text(), call(t, l, "entropy", `{}`).Text())
		}
		if !strings.HasPrefix(seen[0], "time=1640995200 random=") || seen[1] != seen[0] || seen[2] != seen[0] || seen[3] != seen[0] {
			t.Errorf("deterministic, grants %v: %q", gs, seen)
		}
	}
}

// The real clocks are cut to their resolution: a millisecond without the
// clock grant, a microsecond with it.
func TestRealClockResolution(t *testing.T) {
	if clockResolution(false) != time.Millisecond || clockResolution(true) != time.Microsecond {
		t.Fatalf("resolutions %v without the grant, %v with it; want 1ms and 1µs", clockResolution(false), clockResolution(true))
	}
	for _, res := range []time.Duration{time.Millisecond, time.Microsecond} {
		reads := 0
		wall, mono := realClocks(res, func() { reads++ })
		for range 50 {
			if _, ns := wall(); time.Duration(ns)%res != 0 {
				t.Fatalf("resolution %v: wall clock read %d ns past the second", res, ns)
			}
			if m := mono(); time.Duration(m)%res != 0 {
				t.Fatalf("resolution %v: monotonic clock read %d ns", res, m)
			}
		}
		if reads != 100 {
			t.Errorf("%d readings counted, want 100", reads)
		}
	}
	// The fine clock moves within a millisecond where the coarse one
	// cannot: some of many readings are not whole milliseconds.
	wall, _ := realClocks(time.Microsecond, func() {})
	fine := false
	for range 2000 {
		if _, ns := wall(); time.Duration(ns)%time.Millisecond != 0 {
			fine = true
			break
		}
	}
	if !fine {
		t.Error("the microsecond clock only ever read whole milliseconds")
	}
}

func TestEnvGrant(t *testing.T) {
	t.Parallel()
	env := map[string]string{"API_TOKEN": "s3cret", "OTHER_SECRET": "hidden"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	h, rec := newTestHost(t, Options{LookupEnv: lookup})

	w := load(t, h, "wasicmd.wasm", Module{Grants: grants(t, "env:API_TOKEN")})
	if got := call(t, w, "env", `{"key":"API_TOKEN"}`).Text(); got != "s3cret" {
		t.Errorf("WASI env API_TOKEN = %q", got)
	}
	if got := call(t, w, "env", `{"key":"OTHER_SECRET"}`).Text(); got != "(unset)" {
		t.Errorf("WASI env OTHER_SECRET = %q", got)
	}

	e := load(t, h, "echo.wasm", Module{Grants: grants(t, "env:API_TOKEN"), Config: map[string]string{"region": "eu"}})
	for key, want := range map[string]string{"API_TOKEN": "s3cret", "OTHER_SECRET": "(unset)", "region": "eu", "PATH": "(unset)", "": "(unset)"} {
		if got := call(t, e, "config", `{"key":"`+key+`"}`).Text(); got != want {
			t.Errorf("config_get(%s) = %q, want %q", key, got, want)
		}
	}
	call(t, e, "config", `{"key":"API_TOKEN"}`)
	if r := rec.last(t); strings.Join(r.Used, ",") != "env:API_TOKEN" {
		t.Errorf("used = %v", r.Used)
	}
}

func TestToolCallGrant(t *testing.T) {
	t.Parallel()
	var got []string
	h, rec := newTestHost(t, Options{CallTool: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		got = append(got, c.Name+" "+string(c.Arguments))
		return tool.Text("sunny in Oslo"), nil
	}})
	l := load(t, h, "hostcall.wasm", Module{Grants: grants(t, "tools:weather")})
	res := call(t, l, "hostcall", `{"tool":"weather"}`)
	if res.IsError || res.Text() != "sunny in Oslo" || len(got) != 1 || got[0] != `weather {"city":"Oslo"}` {
		t.Fatalf("result %+v, dispatched %q", res, got)
	}
	res = call(t, l, "hostcall", `{"tool":"delete_everything"}`)
	want := `tools: call of host tool "delete_everything" refused: the module has no tools:delete_everything grant`
	if !res.IsError || res.Text() != want || len(got) != 1 {
		t.Fatalf("un-granted tool: %q (dispatched %q)", res.Text(), got)
	}
	if r := rec.last(t); r.Outcome != OutcomeDenied {
		t.Errorf("outcome = %s", r.Outcome)
	}
}

// One read of the system's generator fills at most randomChunk bytes (it
// cannot be preempted), and none once the call is to stop.
func TestReadRandomIsCut(t *testing.T) {
	inst := &instance{}
	buf := make([]byte, 1<<20)
	n, err := inst.readRandom(buf)
	if err != nil || n != randomChunk {
		t.Fatalf("read %d bytes (%v), want %d", n, err, randomChunk)
	}
	if bytes.Count(buf[:n], []byte{0}) > n/64 {
		t.Error("the bytes read look unfilled")
	}
	inst.interrupt()
	if n, err := inst.readRandom(buf); n != 0 || err == nil {
		t.Errorf("after a stop request: %d bytes, %v", n, err)
	}
}

// A config grant gives a key of any shape (hyper-mcp's "api-key") a
// literal value or an environment variable's; the grant wins over the
// sidecar's config; an unset variable gives no key.
func TestConfigGrant(t *testing.T) {
	t.Parallel()
	env := map[string]string{"MY_TOKEN": "s3cret"}
	h, _ := newTestHost(t, Options{LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	sidecar := []byte(`{"tools":[{"name":"config","inputSchema":{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}}],
		"config":{"region":"from-sidecar","zone":"z1"}}`)
	l := load(t, h, "echo.wasm", Module{Sidecar: sidecar,
		Grants: grants(t, "config:api-key=$MY_TOKEN", "config:region=eu-west-1", "config:missing=$NOT_SET", "config:price=$$5")})
	for key, want := range map[string]string{"api-key": "s3cret", "region": "eu-west-1", "zone": "z1", "missing": "(unset)", "price": "$5", "MY_TOKEN": "(unset)"} {
		if got := call(t, l, "config", `{"key":"`+key+`"}`).Text(); got != want {
			t.Errorf("config %s = %q, want %q", key, got, want)
		}
	}
}

// CallAnyTool (Go API only) lets a module call any host tool, the
// dispatcher deciding; without it or a tools: grant the call is denied,
// and an isolated module cannot have it.
func TestCallAnyTool(t *testing.T) {
	var got []string
	h, _ := newTestHost(t, Options{CallTool: func(ctx context.Context, c tool.Call) (tool.Result, error) {
		got = append(got, c.Name)
		return tool.Text("ok " + c.Name), nil
	}})
	l := load(t, h, "hostcall.wasm", Module{CallAnyTool: true})
	for _, name := range []string{"weather", "delete_everything"} {
		if res := call(t, l, "hostcall", `{"tool":"`+name+`"}`); res.IsError || res.Text() != "ok "+name {
			t.Fatalf("%s: %+v", name, res)
		}
	}
	if len(got) != 2 {
		t.Fatalf("dispatched %q", got)
	}
	// Without a tools: grant or CallAnyTool the module loads, and its
	// call of tool_call is refused before anything is dispatched.
	none := load(t, h, "hostcall.wasm", Module{Name: "none"})
	if res := call(t, none, "hostcall", `{"tool":"weather"}`); !res.IsError || !strings.Contains(res.Text(), "tools: call of extism:host/user.tool_call refused") || len(got) != 2 {
		t.Fatalf("with no tools: grant and no CallAnyTool: %+v (dispatched %q)", res, got)
	}
	_, err := h.Load(context.Background(), Module{Name: "hostcall", Bytes: wasmFile(t, "hostcall.wasm"), CallAnyTool: true, Isolated: true})
	if err == nil || !strings.Contains(err.Error(), "cannot be given CallAnyTool") {
		t.Fatalf("isolated with CallAnyTool: %v", err)
	}
}
