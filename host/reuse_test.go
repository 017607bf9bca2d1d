package host

import (
	"context"
	"testing"
)

// TestInstanceReuse counts calls in a guest global (state.wasm): by default
// every call starts from a fresh instance, so no state carries over; with
// Module.Reuse a successful call's instance serves the next one, and an
// instance whose call failed or crashed is discarded.
func TestInstanceReuse(t *testing.T) {
	t.Parallel()
	// steps: tool and the text the call returns ("" for an error result).
	cases := []struct {
		name  string
		m     Module
		pool  int
		steps [][2]string
	}{
		{"fresh instances (pooled)", Module{}, 0,
			[][2]string{{"count", "1"}, {"count", "1"}, {"count", "1"}}},
		{"fresh instances (no pool)", Module{}, -1,
			[][2]string{{"count", "1"}, {"count", "1"}}},
		{"reuse keeps a successful instance", Module{Reuse: true}, 0,
			[][2]string{{"count", "1"}, {"count", "2"}, {"count", "3"}}},
		{"reuse discards after a failure", Module{Reuse: true}, 0,
			[][2]string{{"count", "1"}, {"count", "2"}, {"fail", ""}, {"count", "1"}}},
		{"reuse discards after a crash", Module{Reuse: true}, 0,
			[][2]string{{"count", "1"}, {"trap", ""}, {"count", "1"}, {"count", "2"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h, _ := newTestHost(t, Options{PoolSize: c.pool})
			l := load(t, h, "state.wasm", c.m)
			for i, s := range c.steps {
				if l.pool != nil {
					// Every call takes a pooled instance, the path Reuse
					// returns instances to.
					l.pool.warm()
				}
				res := call(t, l, s[0], `{}`)
				if got := res.Text(); s[1] == "" && !res.IsError || s[1] != "" && (res.IsError || got != s[1]) {
					t.Fatalf("step %d (%s) = %+v, want %q (\"\": an error)", i, s[0], res, s[1])
				}
			}
		})
	}
}

// A reused instance goes back even when a refill filled the pool during
// its call: the oldest ready instance makes room, and the next call gets
// the warm one.
func TestReusedInstanceWinsAFullPool(t *testing.T) {
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "state.wasm", Module{Reuse: true})
	p := l.pool
	p.warm()
	warm := p.get()
	fresh, err := l.newInstance(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ready = append(p.ready, fresh) // what a refill would have done
	full := len(p.ready) == p.size
	p.mu.Unlock()
	if !full {
		t.Fatalf("pool not full before put")
	}
	p.put(warm)
	if got := p.get(); got != warm {
		t.Errorf("the next call would get another instance than the warm one put back")
	}
	p.mu.Lock()
	n := len(p.ready)
	p.mu.Unlock()
	if n != p.size-1 {
		t.Errorf("%d instances ready after taking the warm one, want %d (one evicted, none leaked)", n, p.size-1)
	}
}
