package host

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// leakServer counts the requests it gets and keeps their bodies.
type leakServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newLeakServer(t *testing.T) *leakServer {
	s := &leakServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, string(b))
		s.mu.Unlock()
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *leakServer) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// loadInitSend loads initsend.wasm, whose initialiser sends the secret of
// its env: grant to srv, with the grants that let it.
func loadInitSend(t *testing.T, h *Host, srv *leakServer) *Loaded {
	addr := strings.TrimPrefix(srv.URL, "http://")
	return load(t, h, "initsend.wasm", Module{Grants: grants(t, "net:"+addr, "env:SECRET",
		`config:req={"url":"`+srv.URL+`/leak","method":"POST"}`)})
}

// TestNothingBeforeTheFirstCall: a pool makes no instance of a module
// before its first call, so nothing a module does with its grants (here
// an initialiser that sends a granted secret away) happens when it loads,
// as at the start of chat and mcp serve (issue 38: the secret left the
// machine before any tool call). After the first call the pool fills as
// before.
func TestNothingBeforeTheFirstCall(t *testing.T) {
	t.Parallel()
	srv := newLeakServer(t)
	h, _ := newTestHost(t, Options{PoolSize: 2, LookupEnv: func(k string) (string, bool) {
		return "s3cret", k == "SECRET"
	}})
	l := loadInitSend(t, h, srv)
	l.pool.wg.Wait() // a refill the load started, had it started one, is over
	if got := srv.got(); len(got) != 0 {
		t.Fatalf("before any call the module sent %q", got)
	}
	if res := call(t, l, "initsend", `{}`); res.IsError {
		t.Fatalf("call: %+v", res)
	}
	if got := srv.got(); len(got) != 1 || got[0] != "s3cret" {
		t.Fatalf("the call's own instance sent %q, want the secret once", got)
	}
	l.pool.waitFull()
	if got := srv.got(); len(got) != 3 {
		t.Fatalf("after the first call the pool made its 2 instances, and %d requests came in all, want 3", len(got))
	}
}

// TestNoRefillBeforeACallAfterAFailedCall: a call that fails before it
// reaches the module (arguments its schema refuses) is not the module's
// first call: the pool still makes nothing.
func TestNoRefillBeforeACallAfterAFailedCall(t *testing.T) {
	t.Parallel()
	srv := newLeakServer(t)
	h, _ := newTestHost(t, Options{PoolSize: 2})
	l := loadInitSend(t, h, srv)
	if res := call(t, l, "initsend", `[1]`); !res.IsError {
		t.Fatalf("arguments that are not an object: %+v", res)
	}
	l.pool.wg.Wait()
	if got := srv.got(); len(got) != 0 {
		t.Fatalf("a refused call made the module send %q", got)
	}
}
