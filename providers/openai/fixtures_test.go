package openai_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"
)

// fixturesDir finds shared/fixtures/providers by walking up from the test's
// directory, and skips the test when it is absent: the recordings live
// beside the checkout, never inside it.
func fixturesDir(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		p := filepath.Join(dir, "shared", "fixtures", "providers")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		if filepath.Dir(dir) == dir {
			t.Skipf("recorded provider traffic not found: no shared/fixtures/providers above %s", wd)
		}
	}
}

// exchange is one recorded request and its response.
type exchange struct {
	reqBody  string
	status   int
	header   http.Header
	respBody string
}

// cassette reads a go-vcr v2 cassette.
func cassette(t testing.TB, rel string) []exchange {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixturesDir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Interactions []struct {
			Request struct {
				Body string `yaml:"body"`
			} `yaml:"request"`
			Response struct {
				Body    string              `yaml:"body"`
				Code    int                 `yaml:"code"`
				Headers map[string][]string `yaml:"headers"`
			} `yaml:"response"`
		} `yaml:"interactions"`
	}
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	var out []exchange
	for _, it := range c.Interactions {
		out = append(out, exchange{reqBody: it.Request.Body, status: it.Response.Code,
			header: http.Header(it.Response.Headers), respBody: it.Response.Body})
	}
	return out
}

// httprr reads a langchaingo httprr trace: "httprr trace v1", then for each
// exchange a line "<req len> <resp len>" and the raw request and response.
func httprr(t testing.TB, rel string) []exchange {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixturesDir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(bytes.NewReader(raw))
	if line, _ := r.ReadString('\n'); line != "httprr trace v1\n" {
		t.Fatalf("%s: not an httprr trace: %q", rel, line)
	}
	var out []exchange
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF {
			return out
		}
		var nreq, nresp int
		if _, err := fmt.Sscanf(line, "%d %d", &nreq, &nresp); err != nil {
			t.Fatalf("%s: bad length line %q", rel, line)
		}
		reqRaw, respRaw := make([]byte, nreq), make([]byte, nresp)
		if _, err := io.ReadFull(r, reqRaw); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(r, respRaw); err != nil {
			t.Fatal(err)
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(reqRaw)))
		if err != nil {
			t.Fatalf("%s: request: %v", rel, err)
		}
		reqBody, _ := io.ReadAll(req.Body)
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(respRaw)), req)
		if err != nil {
			t.Fatalf("%s: response: %v", rel, err)
		}
		respBody, _ := io.ReadAll(resp.Body)
		out = append(out, exchange{reqBody: string(reqBody), status: resp.StatusCode, header: resp.Header, respBody: string(respBody)})
	}
}

// chunksAsSSE frames a vercel-ai *.chunks.txt file (one JSON payload per
// line) the way OpenAI-compatible servers send it.
func chunksAsSSE(t testing.TB, rel string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixturesDir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString("data: " + line + "\n\n")
		}
	}
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func readFixture(t testing.TB, rel string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixturesDir(t), rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// replayServer answers the n-th request with the n-th exchange's response
// and keeps the bodies it received. Streams are written in small flushed
// pieces so the client meets lines and events split across reads, as on a
// real connection.
type replayServer struct {
	*httptest.Server
	mu       sync.Mutex
	ex       []exchange
	received []string
	headers  []http.Header
}

func newReplayServer(t testing.TB, ex []exchange) *replayServer {
	rs := &replayServer{ex: ex}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reqBody, _ := io.ReadAll(r.Body)
		rs.mu.Lock()
		n := len(rs.received)
		rs.received = append(rs.received, string(reqBody))
		rs.headers = append(rs.headers, r.Header.Clone())
		rs.mu.Unlock()
		if r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "unexpected path "+r.URL.Path, http.StatusNotFound)
			return
		}
		if n >= len(rs.ex) {
			http.Error(w, "replay: no recorded response for request "+strconv.Itoa(n+1), http.StatusGone)
			return
		}
		e := rs.ex[n]
		for k, vs := range e.header {
			if k == "Content-Length" {
				continue
			}
			w.Header()[k] = vs
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		status := e.status
		if status == 0 {
			status = 200
		}
		w.WriteHeader(status)
		body := e.respBody
		if !strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			io.WriteString(w, body)
			return
		}
		for len(body) > 0 {
			n := min(97, len(body))
			if _, err := io.WriteString(w, body[:n]); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			body = body[n:]
		}
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *replayServer) request(t testing.TB, i int) string {
	t.Helper()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if i >= len(rs.received) {
		t.Fatalf("server received %d requests, want at least %d", len(rs.received), i+1)
	}
	return rs.received[i]
}

// normalizeBody decodes a request body for comparison: tool-call
// arguments (a JSON string) are decoded so formatting does not matter, and
// the "strict": false some clients add to tools is dropped, since it is
// the API's default.
func normalizeBody(t testing.TB, body string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, body)
	}
	if tools, ok := m["tools"].([]any); ok {
		for _, tl := range tools {
			if fn, ok := tl.(map[string]any)["function"].(map[string]any); ok && fn["strict"] == false {
				delete(fn, "strict")
			}
		}
	}
	if msgs, ok := m["messages"].([]any); ok {
		for _, msg := range msgs {
			calls, _ := msg.(map[string]any)["tool_calls"].([]any)
			for _, c := range calls {
				fn := c.(map[string]any)["function"].(map[string]any)
				if s, ok := fn["arguments"].(string); ok {
					var v any
					if json.Unmarshal([]byte(s), &v) == nil {
						fn["arguments"] = v
					}
				}
			}
		}
	}
	return m
}
