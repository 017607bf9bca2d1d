package gemini

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
)

// The recorded traffic lives in /work/shared/fixtures/providers, outside the
// module. It is read in place: the test walks up from its directory until it
// finds shared/fixtures, and skips when there is none.

func fixturesDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		cand := filepath.Join(dir, "shared", "fixtures", "providers")
		if fi, err := os.Stat(cand); err == nil && fi.IsDir() {
			return cand
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("recorded provider fixtures not found: no shared/fixtures/providers above " + mustGetwd())
		}
		dir = parent
	}
}

func mustGetwd() string {
	d, _ := os.Getwd()
	return d
}

// cassette is a go-vcr v2 recording: the fields these tests read.
type cassette struct {
	Interactions []struct {
		Request struct {
			Body    string              `yaml:"body"`
			URL     string              `yaml:"url"`
			Method  string              `yaml:"method"`
			Headers map[string][]string `yaml:"headers"`
		} `yaml:"request"`
		Response struct {
			Body    string              `yaml:"body"`
			Code    int                 `yaml:"code"`
			Headers map[string][]string `yaml:"headers"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

func loadCassette(t testing.TB, rel string) *cassette {
	t.Helper()
	path := filepath.Join(fixturesDir(t), rel)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	var c cassette
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf("parsing cassette %s: %v", rel, err)
	}
	if len(c.Interactions) == 0 {
		t.Fatalf("cassette %s has no interactions", rel)
	}
	return &c
}

// recordedExchange is one request/response pair of an httprr trace.
type recordedExchange struct {
	req      *http.Request
	reqBody  []byte
	resp     *http.Response
	respBody []byte
}

// loadHTTPRR parses an httprr trace: a "httprr trace v1" line, then for each
// exchange a "<request bytes> <response bytes>" line followed by the raw
// request and the raw response.
func loadHTTPRR(t testing.TB, rel string) []recordedExchange {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixturesDir(t), rel))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	header, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok || string(header) != "httprr trace v1" {
		t.Fatalf("%s: not an httprr trace", rel)
	}
	var out []recordedExchange
	for len(rest) > 0 {
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			t.Fatalf("%s: truncated size line", rel)
		}
		var nreq, nresp int
		if _, err := fmt.Sscanf(string(line), "%d %d", &nreq, &nresp); err != nil {
			t.Fatalf("%s: bad size line %q: %v", rel, line, err)
		}
		if len(after) < nreq+nresp {
			t.Fatalf("%s: truncated exchange", rel)
		}
		rawReq, rawResp := after[:nreq], after[nreq:nreq+nresp]
		rest = after[nreq+nresp:]

		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(rawReq)))
		if err != nil {
			t.Fatalf("%s: request: %v", rel, err)
		}
		reqBody, err := io.ReadAll(req.Body)
		if err != nil {
			t.Fatalf("%s: request body: %v", rel, err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rawResp)), req)
		if err != nil {
			t.Fatalf("%s: response: %v", rel, err)
		}
		respBody, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("%s: response body: %v", rel, err)
		}
		out = append(out, recordedExchange{req: req, reqBody: reqBody, resp: resp, respBody: respBody})
	}
	return out
}

// recorded is a canned HTTP answer for the replay server.
type recorded struct {
	status  int
	headers http.Header
	body    string
}

// received is what the replay server got.
type received struct {
	method, path string
	header       http.Header
	body         []byte
}

// replayServer serves the answers in order, one per request, and records
// the requests. A request beyond the last answer fails the test.
type replayServer struct {
	*httptest.Server
	mu       sync.Mutex
	answers  []recorded
	requests []received
}

func newReplayServer(t testing.TB, answers ...recorded) *replayServer {
	t.Helper()
	rs := &replayServer{answers: answers}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rs.mu.Lock()
		n := len(rs.requests)
		rs.requests = append(rs.requests, received{method: r.Method, path: r.URL.RequestURI(), header: r.Header.Clone(), body: body})
		rs.mu.Unlock()
		if n >= len(rs.answers) {
			t.Errorf("replay server: unexpected request %d to %s", n+1, r.URL)
			http.Error(w, "no recorded answer", http.StatusTeapot)
			return
		}
		a := rs.answers[n]
		for k, vs := range a.headers {
			for _, v := range vs {
				w.Header().Add(k, v)
			}
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(a.body)))
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *replayServer) request(t testing.TB, i int) received {
	t.Helper()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if i >= len(rs.requests) {
		t.Fatalf("replay server got %d requests, want at least %d", len(rs.requests), i+1)
	}
	return rs.requests[i]
}

// answersOf turns a cassette's responses into replay answers.
func answersOf(c *cassette) []recorded {
	var out []recorded
	for _, in := range c.Interactions {
		h := http.Header{}
		for k, vs := range in.Response.Headers {
			for _, v := range vs {
				h.Add(k, v)
			}
		}
		out = append(out, recorded{status: in.Response.Code, headers: h, body: in.Response.Body})
	}
	return out
}
