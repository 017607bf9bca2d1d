package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/tool"
)

// TestDeterminismWithoutGrants: without clock and random a module sees a
// fixed clock and a seeded generator, so two calls (and two hosts) see the
// same; with the grants it sees the real clock.
func TestDeterminismWithoutGrants(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{})
	l := load(t, h, "wasicmd.wasm", Module{})
	a := call(t, l, "entropy", `{}`).Text()
	b := call(t, l, "entropy", `{}`).Text()
	if a != b || !strings.HasPrefix(a, "time=1640995200 random=") {
		t.Fatalf("without grants: %q then %q", a, b)
	}
	if r := rec.last(t); len(r.Used) != 0 {
		t.Errorf("used = %v", r.Used)
	}
	h2, _ := newTestHost(t, Options{})
	if c := call(t, load(t, h2, "wasicmd.wasm", Module{}), "entropy", `{}`).Text(); c != a {
		t.Errorf("another host saw %q, want %q", c, a)
	}

	g := load(t, h, "wasicmd.wasm", Module{Grants: grants(t, "clock", "random")})
	x := call(t, g, "entropy", `{}`).Text()
	y := call(t, g, "entropy", `{}`).Text()
	if x == y {
		t.Errorf("with random, two calls saw %q", x)
	}
	if want := "time=" + itoa(time.Now().Unix()/100); !strings.HasPrefix(x[:len(want)], want) {
		t.Errorf("with clock: %q, want the current time", x)
	}
	if r := rec.last(t); strings.Join(r.Used, ",") != "clock,random" {
		t.Errorf("used = %v", r.Used)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

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
