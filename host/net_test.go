package host

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// serverPort returns the port of an httptest server on 127.0.0.1.
func serverPort(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func TestNetGrantedIPLiteral(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("X-Test") != "1" {
			http.Error(w, "missing header", 400)
			return
		}
		w.Header().Add("Vary", "Accept")
		w.Header().Add("Vary", "Origin")
		w.Header().Set("X-Single", "one")
		fmt.Fprint(w, "hello from the server")
	}))
	defer srv.Close()
	port := serverPort(t, srv)
	h, rec := newTestHost(t, Options{})
	l := load(t, h, "fetch.wasm", Module{Grants: grants(t, "net:127.0.0.1:"+port)})
	res := call(t, l, "fetch", `{"url":"`+srv.URL+`/x"}`)
	var got struct {
		Status, Bytes int
		Headers       map[string]string
	}
	if res.IsError || res.Text() != "hello from the server" || json.Unmarshal(res.StructuredContent, &got) != nil || got.Status != 200 || got.Bytes != 21 {
		t.Fatalf("result = %+v", res)
	}
	// Lower-case names; a repeated header's values joined by "," as
	// extism/go-sdk joins them.
	if got.Headers["vary"] != "Accept,Origin" || got.Headers["x-single"] != "one" || got.Headers["content-length"] != "21" {
		t.Errorf("headers = %v", got.Headers)
	}
	r := rec.last(t)
	if r.Outcome != OutcomeOK || len(r.Used) != 1 || r.Used[0] != "net:127.0.0.1:"+port {
		t.Errorf("record = %+v", r)
	}
	if hits.Load() != 1 {
		t.Errorf("server saw %d requests", hits.Load())
	}
}

// TestNetRefusals checks every refusal of the HTTP function; none of them
// reaches the server.
func TestNetRefusals(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, "http://evil.example/steal", http.StatusFound)
		case "/metadata":
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
		case "/zoned":
			http.Redirect(w, r, "http://[::1%25.example.com]:"+strings.TrimPrefix(r.Host[strings.LastIndex(r.Host, ":"):], ":")+"/", http.StatusFound)
		case "/big":
			w.Write(make([]byte, 2<<20))
		default:
			fmt.Fprint(w, "ok")
		}
	}))
	defer srv.Close()
	port := serverPort(t, srv)
	ipGrant := "net:127.0.0.1:" + port
	cases := []struct {
		name   string
		grants []string
		limits Limits
		url    string
		want   string
		hits   int32 // requests the server may see
	}{
		{"host not granted", []string{ipGrant}, Limits{}, "http://api.example.com/v1",
			"net: request to http://api.example.com/v1 refused: no net: grant covers api.example.com:80 (grant net:api.example.com to allow it)", 0},
		{"port not granted", []string{"net:example.com"}, Limits{}, "http://example.com:8080/",
			"net: request to http://example.com:8080/ refused: no net: grant covers example.com:8080 (grant net:example.com:8080 to allow it)", 0},
		{"scheme not allowed", []string{ipGrant}, Limits{}, "file:///etc/passwd",
			"net: request to file:///etc/passwd refused: only http and https URLs are allowed", 0},
		{"loopback without an IP grant", []string{"net:example.com"}, Limits{}, srv.URL + "/",
			"net: request to " + srv.URL + "/ refused: 127.0.0.1 is a loopback address; only an explicit IP grant (net:127.0.0.1:" + port + ") allows it", 0},
		{"metadata without an IP grant", []string{"net:example.com"}, Limits{}, "http://169.254.169.254/latest/meta-data/",
			"net: request to http://169.254.169.254/latest/meta-data/ refused: 169.254.169.254 is a cloud metadata address; only an explicit IP grant (net:169.254.169.254:80) allows it", 0},
		{"IPv6 metadata without an IP grant", []string{"net:example.com"}, Limits{}, "http://[fd00:ec2::254]/",
			"net: request to http://[fd00:ec2::254]/ refused: fd00:ec2::254 is a cloud metadata address; only an explicit IP grant (net:[fd00:ec2::254]:80) allows it", 0},
		{"redirect to an un-granted host", []string{ipGrant}, Limits{}, srv.URL + "/away",
			"net: redirect from " + srv.URL + "/away to http://evil.example/steal refused: no net: grant covers evil.example:80 (grant net:evil.example to allow it)", 1},
		{"redirect to the metadata address", []string{ipGrant}, Limits{}, srv.URL + "/metadata",
			"net: redirect from " + srv.URL + "/metadata to http://169.254.169.254/latest/meta-data/ refused: 169.254.169.254 is a cloud metadata address; only an explicit IP grant (net:169.254.169.254:80) allows it", 1},
		{"zoned IPv6 literal under a wildcard grant", []string{"net:*.example.com:" + port}, Limits{}, "http://[::1%25.example.com]:" + port + "/",
			"net: request to http://[::1%25.example.com]:" + port + "/ refused: IPv6 zones (%) are not allowed in a host", 0},
		{"redirect to a zoned IPv6 literal", []string{ipGrant, "net:*.example.com:" + port}, Limits{}, srv.URL + "/zoned",
			"net: redirect from " + srv.URL + "/zoned to http://[::1%25.example.com]:" + port + "/ refused: IPv6 zones (%) are not allowed in a host", 1},
		{"response past the HTTP limit", []string{ipGrant}, Limits{HTTPResponse: 1 << 20}, srv.URL + "/big",
			"tool exceeded its HTTP response limit of 1 MiB", 1},
	}
	h, rec := newTestHost(t, Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := hits.Load()
			l := load(t, h, "fetch.wasm", Module{Grants: grants(t, c.grants...), Limits: c.limits})
			res := call(t, l, "fetch", `{"url":"`+c.url+`"}`)
			if !res.IsError || res.Text() != c.want {
				t.Fatalf("result = %q, want %q", res.Text(), c.want)
			}
			r := rec.last(t)
			wantOutcome := OutcomeDenied
			if strings.HasPrefix(c.want, "tool exceeded") {
				wantOutcome = OutcomeLimit
			} else if len(r.Denied) != 1 || r.Denied[0] != c.want {
				t.Errorf("record.Denied = %q", r.Denied)
			}
			if r.Outcome != wantOutcome {
				t.Errorf("outcome = %s, want %s", r.Outcome, wantOutcome)
			}
			if got := hits.Load() - before; got != c.hits {
				t.Errorf("the server saw %d requests, want %d", got, c.hits)
			}
			mustEcho(t, h)
		})
	}
}

// TestNetDialCheck grants host names that resolve to forbidden addresses
// (as DNS rebinding would): the dial is refused after resolution.
func TestNetDialCheck(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "reached")
	}))
	defer srv.Close()
	port := serverPort(t, srv)
	h, rec := newTestHost(t, Options{})

	l := load(t, h, "fetch.wasm", Module{Grants: grants(t, "net:localhost:"+port)})
	res := call(t, l, "fetch", `{"url":"http://localhost:`+port+`/"}`)
	want := "net: connection to localhost:" + port + " refused: localhost resolves to 127.0.0.1, a loopback address; only an explicit IP grant (net:127.0.0.1:" + port + ") allows it"
	if !res.IsError || res.Text() != want {
		t.Fatalf("result = %q, want %q", res.Text(), want)
	}
	if r := rec.last(t); r.Outcome != OutcomeDenied {
		t.Errorf("outcome = %s", r.Outcome)
	}
	if hits.Load() != 0 {
		t.Fatal("the refused request reached the server")
	}

	// With the IP grant as well, the same name is allowed.
	l = load(t, h, "fetch.wasm", Module{Grants: grants(t, "net:localhost:"+port, "net:127.0.0.1:"+port)})
	if res := call(t, l, "fetch", `{"url":"http://localhost:`+port+`/"}`); res.IsError || res.Text() != "reached" {
		t.Fatalf("with the IP grant: %+v", res)
	}
}

func TestNetNoProxyFromEnvironment(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	t.Setenv("http_proxy", "http://127.0.0.1:1")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "direct") }))
	defer srv.Close()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "fetch.wasm", Module{Grants: grants(t, "net:127.0.0.1:"+serverPort(t, srv))})
	if res := call(t, l, "fetch", `{"url":"`+srv.URL+`"}`); res.IsError || res.Text() != "direct" {
		t.Fatalf("result = %+v", res)
	}
}

// net:* (hyper-mcp's allowed_hosts "*") allows any host, and still
// refuses loopback, private, link-local and metadata addresses, by name or
// by address.
func TestNetAnyPublicHost(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
	}))
	defer srv.Close()
	port := serverPort(t, srv)
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "fetch.wasm", Module{Grants: grants(t, "net:*:"+port, "net:*")})
	for _, url := range []string{"http://localhost:" + port + "/", "http://127.0.0.1:" + port + "/", "http://169.254.169.254/latest", "http://10.0.0.1/"} {
		res := call(t, l, "fetch", `{"url":"`+url+`"}`)
		if !res.IsError || !strings.Contains(res.Text(), "refused") || !strings.Contains(res.Text(), "only an explicit IP grant") {
			t.Errorf("%s: %+v", url, res)
		}
	}
	if hits.Load() != 0 {
		t.Fatal("a refused request reached the server")
	}
}
