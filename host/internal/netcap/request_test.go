package netcap

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
	"github.com/autoagent-go/autoagent/host/internal/hostcall/hostcalltest"
	"github.com/autoagent-go/autoagent/manifest"
)

// fakeCall is a netcap.Call over hostcalltest's in-memory call.
type fakeCall struct {
	*hostcalltest.Call
	session *Session
}

func (c *fakeCall) Net() *Session { return c.session }

func newCall(t *testing.T, specs ...string) *fakeCall {
	c := &fakeCall{Call: hostcalltest.New(manifest.DefaultLimits())}
	if len(specs) > 0 {
		p := NewPolicy(grants(t, specs...), nil)
		t.Cleanup(p.Close)
		c.session = NewSession(p)
	}
	return c
}

func doc(url string) string { return `{"url":"` + url + `","method":"post","headers":{"X-A":"1"}}` }

// TestRequestRefuses: describe, no net: grant, a URL no grant covers, a
// loopback address behind a name grant and a request that is not JSON
// end the call before anything is sent.
func TestRequestRefuses(t *testing.T) {
	t.Parallel()
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits++ }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	c := newCall(t, "net:127.0.0.1:"+port)
	c.Describe = true
	if end := c.Run(func() { request(c, c.Block(doc(srv.URL)), 0) }); end.Kind != hostcalltest.Denied || end.Reason != hostcall.NoCapabilities {
		t.Errorf("under describe: %+v", end)
	}
	none := newCall(t)
	if end := none.Run(func() { request(none, none.Block(doc(srv.URL)), 0) }); end.Kind != hostcalltest.Denied || !strings.Contains(end.Reason, "no net: grant") {
		t.Errorf("without a grant: %+v", end)
	}
	other := newCall(t, "net:api.example.com")
	if end := other.Run(func() { request(other, other.Block(doc(srv.URL)), 0) }); end.Kind != hostcalltest.Denied || !strings.Contains(end.Reason, "only an explicit IP grant (net:127.0.0.1:"+port+")") {
		t.Errorf("an ungranted host: %+v", end)
	}
	byName := newCall(t, "net:localhost:"+port)
	if end := byName.Run(func() { request(byName, byName.Block(doc("http://localhost:"+port+"/")), 0) }); end.Kind != hostcalltest.Denied || !strings.Contains(end.Reason, "loopback") {
		t.Errorf("loopback through a name grant: %+v", end)
	}
	bad := newCall(t, "net:127.0.0.1:"+port)
	if end := bad.Run(func() { request(bad, bad.Block("{"), 0) }); end.Kind != hostcalltest.Crashed || !strings.Contains(end.Reason, "not JSON") {
		t.Errorf("a request that is not JSON: %+v", end)
	}
	if hits != 0 {
		t.Fatalf("%d refused requests reached the server", hits)
	}
}

// TestRequestRoundTrip: a granted request sends its method, headers and
// body, and the response's body, status and headers come back; the
// request and body blocks are freed, the grant recorded.
func TestRequestRoundTrip(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Add("X-Twice", "a")
		w.Header().Add("X-Twice", "b")
		w.WriteHeader(201)
		io.WriteString(w, r.Method+" "+r.Header.Get("X-A")+" "+string(b))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := newCall(t, "net:127.0.0.1:"+port)
	var resp, hdrs, code uint64
	req, body := c.Block(doc(srv.URL)), c.Block("payload")
	end := c.Run(func() {
		resp = request(c, req, body)
		hdrs = headers(c)
		code = uint64(status(c))
	})
	if end.Kind != hostcalltest.Returned {
		t.Fatalf("ended: %+v", end)
	}
	if got := string(c.Bytes(resp)); got != "POST 1 payload" {
		t.Errorf("response %q", got)
	}
	if code != 201 || !strings.Contains(string(c.Bytes(hdrs)), `"x-twice":"a,b"`) {
		t.Errorf("status %d, headers %s", code, c.Bytes(hdrs))
	}
	if c.Bytes(req) != nil || c.Bytes(body) != nil {
		t.Error("the request's blocks were not freed")
	}
	if len(c.Used) != 1 || c.Used[0] != "net:127.0.0.1:"+port {
		t.Errorf("grants used: %v", c.Used)
	}
	c.session.Reset()
	if status(c) != 0 {
		t.Error("Reset kept the status")
	}
}

// TestRequestLimits: a body past the request limit, a response past the
// response limit (declared, or streamed without a length) and a response
// slower than the call's deadline end the call with those limits.
func TestRequestLimits(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			io.WriteString(w, strings.Repeat("x", 100))
		case "/stream":
			w.(http.Flusher).Flush()
			for range 10 {
				io.WriteString(w, strings.Repeat("x", 20))
				w.(http.Flusher).Flush()
			}
		case "/slow":
			<-release
		}
	}))
	defer srv.Close()
	defer close(release)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := newCall(t, "net:127.0.0.1:"+port)
	c.Bounds.HTTPRequest, c.Bounds.HTTPResponse = 10, 50
	if end := c.Run(func() { request(c, c.Block(doc(srv.URL)), c.Block(strings.Repeat("b", 11))) }); end.Kind != hostcalltest.Exceeded || end.Limit != hostcall.LimitHTTPRequest {
		t.Errorf("a body past the request limit: %+v", end)
	}
	for _, path := range []string{"/big", "/stream"} {
		if end := c.Run(func() { request(c, c.Block(doc(srv.URL+path)), 0) }); end.Kind != hostcalltest.Exceeded || end.Limit != hostcall.LimitHTTPResponse {
			t.Errorf("%s past the response limit: %+v", path, end)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	c.Ctx = ctx
	if end := c.Run(func() { request(c, c.Block(doc(srv.URL+"/slow")), 0) }); end.Kind != hostcalltest.TimedOut {
		t.Errorf("a response past the deadline: %+v", end)
	}
}
