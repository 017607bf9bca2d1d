package host

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

func TestKV(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	h, rec := newTestHost(t, Options{KVDir: dir})
	l := load(t, h, "kv.wasm", Module{Grants: grants(t, "kv:notes")})
	steps := []struct{ args, want string }{
		{`{"op":"get","key":"a"}`, "(absent)"},
		{`{"op":"set","key":"a","value":"apple"}`, "stored"},
		{`{"op":"set","key":"b","value":"banana"}`, "stored"},
		{`{"op":"get","key":"a"}`, "apple"},
		{`{"op":"get","ns":"notes","key":"b"}`, "banana"},
		{`{"op":"keys"}`, `["a","b"]`},
		{`{"op":"keys","key":"b"}`, `["b"]`},
		{`{"op":"delete","key":"a"}`, "deleted"},
		{`{"op":"get","key":"a"}`, "(absent)"},
	}
	for _, s := range steps {
		if res := call(t, l, "kv", s.args); res.IsError || res.Text() != s.want {
			t.Fatalf("%s = %+v, want %q", s.args, res, s.want)
		}
	}
	if r := rec.last(t); len(r.Used) != 1 || r.Used[0] != "kv:notes" {
		t.Errorf("used = %v", r.Used)
	}

	// The store persists: a new host on the same directory sees it.
	h2, _ := newTestHost(t, Options{KVDir: dir})
	l2 := load(t, h2, "kv.wasm", Module{Grants: grants(t, "kv:notes")})
	if res := call(t, l2, "kv", `{"op":"get","key":"b"}`); res.Text() != "banana" {
		t.Fatalf("after reopening: %+v", res)
	}
}

func TestKVRefusals(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{})
	l := load(t, h, "kv.wasm", Module{Grants: grants(t, "kv:notes"), Limits: Limits{KVValue: 1024}})
	res := call(t, l, "kv", `{"op":"get","ns":"secrets","key":"k"}`)
	want := `kv: kv_get in namespace "secrets" refused: the module has no kv:secrets grant`
	if !res.IsError || res.Text() != want {
		t.Fatalf("other namespace = %q, want %q", res.Text(), want)
	}
	if r := rec.last(t); r.Outcome != OutcomeDenied {
		t.Errorf("outcome = %s", r.Outcome)
	}
	res = call(t, l, "kv", `{"op":"set","key":"big","size":2048}`)
	if !res.IsError || res.Text() != "tool exceeded its kv value limit of 1 KiB" {
		t.Fatalf("big value = %q", res.Text())
	}
	if res := call(t, l, "kv", `{"op":"get","key":"big"}`); res.Text() != "(absent)" {
		t.Fatalf("the refused value was stored: %+v", res)
	}
	two := load(t, h, "kv.wasm", Module{Grants: grants(t, "kv:a", "kv:b")})
	if res := call(t, two, "kv", `{"op":"get","key":"k"}`); !res.IsError || res.Text() != "tool crashed: kv_get: the module has 2 kv namespaces; name one" {
		t.Fatalf("ambiguous namespace = %q", res.Text())
	}
}

// TestKVConcurrentHosts writes from two hosts (two bbolt handles on the
// same files, as two processes would) and many goroutines at once: no
// write is lost.
func TestKVConcurrentHosts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var ls []*Loaded
	for range 2 {
		h, _ := newTestHost(t, Options{KVDir: dir})
		ls = append(ls, load(t, h, "kv.wasm", Module{Grants: grants(t, "kv:shared")}))
	}
	var wg sync.WaitGroup
	const per = 10
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := ls[i%2]
			tl, _ := l.Tool("kv")
			for j := range per {
				args := fmt.Sprintf(`{"op":"set","key":"k%d-%d","value":"v"}`, i, j)
				res, err := tl.Call(context.Background(), toolCall("kv", args))
				if err != nil || res.IsError {
					t.Errorf("set: %v %+v", err, res)
				}
			}
		}()
	}
	wg.Wait()
	res := call(t, ls[0], "kv", `{"op":"keys"}`)
	var n int
	for _, c := range res.Text() {
		if c == ',' {
			n++
		}
	}
	if n+1 != 4*per {
		t.Fatalf("%d keys stored, want %d: %s", n+1, 4*per, res.Text())
	}
}
