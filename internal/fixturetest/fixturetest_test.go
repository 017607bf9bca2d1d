package fixturetest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/google/go-cmp/cmp"
)

func TestFindWalksUp(t *testing.T) {
	root := t.TempDir()
	want := filepath.Join(root, "shared", "fixtures", "providers")
	deep := filepath.Join(root, "main", "providers", "openai")
	for _, d := range []string{want, deep} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got, ok := find(deep); !ok || got != want {
		t.Errorf("find(%s) = %q, %v; want %q", deep, got, ok, want)
	}
	// A file of that name is not the folder.
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, "shared", "fixtures"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "shared", "fixtures", "providers"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := find(other); ok {
		t.Errorf("find took the file %s for the folder", got)
	}
}

func TestParseCassette(t *testing.T) {
	data := []byte(`version: 2
interactions:
- request:
    body: '{"model":"m"}'
    headers:
      content-type:
      - application/json
    url: https://api.example.com/v1/models/m:streamGenerateContent?alt=sse
    method: POST
  response:
    body: "data: {}\r\n\r\n"
    headers:
      content-type:
      - text/event-stream
    code: 200
- request:
    body: '{"model":"m","n":2}'
    url: https://api.example.com/v1/x
    method: POST
  response:
    body: '{"error":{}}'
    code: 529
`)
	got, err := parseCassette(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []Exchange{{
		Request: Request{Method: "POST", Path: "/v1/models/m:streamGenerateContent?alt=sse",
			Header: http.Header{"Content-Type": {"application/json"}}, Body: `{"model":"m"}`},
		Answer: Answer{Status: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: "data: {}\r\n\r\n"},
	}, {
		Request: Request{Method: "POST", Path: "/v1/x", Header: http.Header{}, Body: `{"model":"m","n":2}`},
		Answer:  Answer{Status: 529, Header: http.Header{}, Body: `{"error":{}}`},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Answer{want[0].Answer, want[1].Answer}, Answers(got)); diff != "" {
		t.Errorf("Answers (-want +got):\n%s", diff)
	}

	for name, bad := range map[string]string{
		"empty":           "version: 2\ninteractions: []\n",
		"not yaml":        "interactions: [\n",
		"bad url":         "interactions:\n- request:\n    url: \"http://[::1\"\n",
		"wrong structure": "interactions: 3\n",
	} {
		if _, err := parseCassette([]byte(bad)); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}

func TestParseHTTPRR(t *testing.T) {
	req := "POST https://api.example.com/v1/messages?beta=1 HTTP/1.1\r\nHost: api.example.com\r\nX-Api-Key: k\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
	resp := "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 9\r\n\r\n{\"e\":\"x\"}"
	trace := fmt.Sprintf("httprr trace v1\n%d %d\n%s%s", len(req), len(resp), req, resp)
	got, err := parseHTTPRR([]byte(trace + fmt.Sprintf("%d %d\n%s%s", len(req), len(resp), req, resp)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d exchanges, want 2", len(got))
	}
	e := got[1]
	if e.Request.Method != "POST" || e.Request.Path != "/v1/messages?beta=1" || e.Request.Header.Get("X-Api-Key") != "k" || e.Request.Body != `{"a":1}` {
		t.Errorf("request = %+v", e.Request)
	}
	if e.Answer.Status != 429 || e.Answer.Header.Get("Retry-After") != "3" || e.Answer.Body != `{"e":"x"}` {
		t.Errorf("answer = %+v", e.Answer)
	}

	for name, bad := range map[string]string{
		"no header line":  "",
		"wrong version":   "httprr trace v2\n",
		"no size line":    "httprr trace v1\n12 3",
		"bad size line":   "httprr trace v1\nten 3\n",
		"negative size":   "httprr trace v1\n-1 3\nabc",
		"truncated":       trace[:len(trace)-4],
		"bad request":     "httprr trace v1\n3 0\nxyz",
		"bad response":    fmt.Sprintf("httprr trace v1\n%d 4\n%sjunk", len(req), req),
		"sizes too large": "httprr trace v1\n100000 1\n",
	} {
		if _, err := parseHTTPRR([]byte(bad)); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}

// TestRecordings reads every recording of each format, so that a fixture
// the loaders cannot read is found here rather than as a puzzling adapter
// failure.
func TestRecordings(t *testing.T) {
	dir := Dir(t)
	cassettes, _ := filepath.Glob(filepath.Join(dir, "fantasy", "*", "*", "*.yaml"))
	traces, _ := filepath.Glob(filepath.Join(dir, "langchaingo", "*.httprr"))
	chunks, _ := filepath.Glob(filepath.Join(dir, "vercel-ai", "*.chunks.txt"))
	if len(cassettes) == 0 || len(traces) == 0 || len(chunks) == 0 {
		t.Fatalf("found %d cassettes, %d traces, %d chunk files under %s", len(cassettes), len(traces), len(chunks), dir)
	}
	rel := func(p string) string { r, _ := filepath.Rel(dir, p); return filepath.ToSlash(r) }
	for _, p := range cassettes {
		for i, e := range Cassette(t, rel(p)) {
			if e.Request.Method != http.MethodPost || e.Answer.Status != 200 || e.Request.Body == "" || e.Answer.Body == "" {
				t.Errorf("%s #%d: %s %s → %d, %d/%d body bytes", rel(p), i, e.Request.Method, e.Request.Path, e.Answer.Status, len(e.Request.Body), len(e.Answer.Body))
			}
		}
	}
	for _, p := range traces {
		for i, e := range HTTPRR(t, rel(p)) {
			if e.Request.Method != http.MethodPost || e.Answer.Status == 0 || e.Request.Header.Get("Content-Type") == "" {
				t.Errorf("%s #%d: %s %s → %d", rel(p), i, e.Request.Method, e.Request.Path, e.Answer.Status)
			}
		}
	}
	for _, p := range chunks {
		for i, c := range Chunks(t, rel(p)) {
			if !strings.HasPrefix(c, "{") || !strings.HasSuffix(c, "}") {
				t.Errorf("%s line %d is not a JSON object: %.60q", rel(p), i+1, c)
			}
		}
	}
}

func TestSSE(t *testing.T) {
	if got, want := SSE([]string{`{"a":1}`, "[DONE]"}, "\n\n"), "data: {\"a\":1}\n\ndata: [DONE]\n\n"; got != want {
		t.Errorf("SSE = %q, want %q", got, want)
	}
	if got, want := SSE([]string{"{}", "{}"}, "\r\n\r\n"), "data: {}\r\n\r\ndata: {}\r\n\r\n"; got != want {
		t.Errorf("SSE = %q, want %q", got, want)
	}
}

func TestServerReplaysInOrder(t *testing.T) {
	srv := NewServer(t,
		Answer{Body: `{"n":1}`, Header: http.Header{"Content-Length": {"1"}, "Request-Id": {"r1"}}},
		Answer{Status: 529, Body: `{"n":2}`},
	)
	for i, want := range []struct {
		status int
		body   string
	}{{200, `{"n":1}`}, {529, `{"n":2}`}} {
		resp, err := http.Post(srv.URL+fmt.Sprintf("/v1/x?i=%d", i), "application/json", strings.NewReader(fmt.Sprintf(`{"req":%d}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != want.status || string(body) != want.body || resp.ContentLength != int64(len(want.body)) ||
			resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("answer %d: %d %q (length %d, %v), want %d %q; a recorded Content-Length must not be replayed",
				i+1, resp.StatusCode, body, resp.ContentLength, err, want.status, want.body)
		}
		if i == 0 && resp.Header.Get("Request-Id") != "r1" {
			t.Errorf("recorded header lost: %v", resp.Header)
		}
	}
	for i, r := range srv.Requests() {
		if r.Method != "POST" || r.Path != fmt.Sprintf("/v1/x?i=%d", i) || r.Body != fmt.Sprintf(`{"req":%d}`, i) || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %d = %+v", i, r)
		}
	}
	if r := srv.Request(t, 1); r.Body != `{"req":1}` {
		t.Errorf("Request(1) = %+v", r)
	}
}

// TestServerStreamsInPieces reads the raw response: each flushed piece of
// an event stream is one HTTP/1.1 chunk of streamPiece bytes.
func TestServerStreamsInPieces(t *testing.T) {
	stream := strings.Repeat("data: {\"x\":\"0123456789\"}\n\n", 40)
	srv := NewServer(t, Answer{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: stream})
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(conn)
	if err != nil {
		t.Fatal(err)
	}
	_, chunked, _ := strings.Cut(string(raw), "\r\n\r\n")
	pieces := strings.Count(chunked, fmt.Sprintf("%x\r\n", streamPiece))
	if want := len(stream) / streamPiece; pieces != want {
		t.Errorf("stream sent in %d pieces of %d bytes, want %d:\n%s", pieces, streamPiece, want, raw)
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(raw))), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != stream {
		t.Errorf("stream body damaged (%v): %q", err, body)
	}
}

func TestServerReportsAnExtraRequest(t *testing.T) {
	var mu sync.Mutex
	var reports []string
	srv := newServer(func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, fmt.Sprintf(format, args...))
	}, []Answer{{Body: "{}"}})
	defer srv.Close()
	for range 2 {
		resp, err := http.Post(srv.URL, "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if len(srv.Requests()) == 2 && resp.StatusCode != http.StatusGone {
			t.Errorf("extra request answered %d, want 410", resp.StatusCode)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 1 || !strings.Contains(reports[0], "request 2") {
		t.Errorf("reports = %q, want one naming request 2", reports)
	}
}

// events yields the given events, then err when not nil.
func events(err error, evs ...llm.StreamEvent) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
		if err != nil {
			yield(llm.StreamEvent{}, err)
		}
	}
}

func TestDrain(t *testing.T) {
	call := llm.ToolCall{ID: "c1", Name: "f", Arguments: []byte(`{"a":1}`)}
	final := &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{
		{Type: llm.PartReasoning, Text: "think"}, llm.TextPart("Hello"), llm.ToolCallPart(call)}}}
	text := func(s string) llm.StreamEvent { return llm.StreamEvent{Type: llm.StreamText, Text: s} }
	good := []llm.StreamEvent{
		{Type: llm.StreamReasoning, Text: "thi"}, {Type: llm.StreamReasoning, Text: "nk"},
		text("Hel"), text("lo"), {Type: llm.StreamToolCall, ToolCall: &call}, {Type: llm.StreamDone, Response: final},
	}
	s, err := drain(events(nil, good...))
	if err != nil || s.Text != "Hello" || s.Reasoning != "think" || s.Response != final || s.Err != nil ||
		len(s.Calls) != 1 || s.Calls[0].ID != "c1" {
		t.Errorf("good stream: %+v, %v", s, err)
	}

	broke := errors.New("connection reset")
	s, err = drain(events(broke, text("Hel")))
	if err != nil || s.Text != "Hel" || s.Response != nil || s.Err != broke {
		t.Errorf("failed stream: %+v, %v; want the text so far and the stream's error", s, err)
	}

	for name, seq := range map[string]iter.Seq2[llm.StreamEvent, error]{
		"event after done": events(nil, append(good, text("!"))...),
		"event after error": func(yield func(llm.StreamEvent, error) bool) {
			_ = yield(llm.StreamEvent{}, broke) && yield(text("x"), nil)
		},
		"done without response":   events(nil, llm.StreamEvent{Type: llm.StreamDone}),
		"call without call":       events(nil, llm.StreamEvent{Type: llm.StreamToolCall}),
		"unknown type":            events(nil, llm.StreamEvent{Type: "audio"}),
		"no done, no error":       events(nil, text("Hel")),
		"text does not add up":    events(nil, text("Hel"), llm.StreamEvent{Type: llm.StreamDone, Response: final}),
		"missing reasoning delta": events(nil, text("Hello"), llm.StreamEvent{Type: llm.StreamToolCall, ToolCall: &call}, llm.StreamEvent{Type: llm.StreamDone, Response: final}),
		"missing call event":      events(nil, good[0], good[1], good[2], good[3], good[5]),
	} {
		if _, err := drain(seq); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestServerStallAndCut(t *testing.T) {
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	srv := NewServer(t, Answer{Header: sse, Body: "data: 1\n\n", Stall: true}, Answer{Header: sse, Body: "data: 2\n\n", Cut: true})

	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 9)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "data: 1\n\n" {
		t.Fatalf("stalled answer: %q, %v", buf, err)
	}
	select {
	case <-srv.finishedChan(0):
		t.Fatal("a stalled answer finished while its client was still reading")
	default:
	}
	resp.Body.Close()
	srv.WaitClosed(t, 0)

	resp, err = http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "data: 2\n\n" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut answer: %q, %v; want the body then an unexpected EOF", body, err)
	}
	srv.WaitClosed(t, 1)
}

// TestServerCloseEndsStalls: closing the server must not wait for a
// client that never leaves.
func TestServerCloseEndsStalls(t *testing.T) {
	srv := newServer(t.Errorf, []Answer{{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: "data: 1\n\n", Stall: true}})
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 9)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(closeWait):
		t.Fatal("Close waited for a stalled answer's client")
	}
}

// fixedProvider answers with resp, streamed by llm.StreamFromComplete.
type fixedProvider struct{ resp *llm.Response }

var _ llm.Provider = fixedProvider{}

func (f fixedProvider) Complete(context.Context, *llm.Request) (*llm.Response, error) {
	return f.resp, nil
}

func (f fixedProvider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return llm.StreamFromComplete(ctx, req, f.Complete)
}

func TestSend(t *testing.T) {
	call := llm.ToolCall{ID: "c1", Name: "f", Arguments: []byte(`{}`)}
	want := &llm.Response{Message: llm.Message{Role: llm.RoleAssistant, Parts: []llm.Part{llm.TextPart("hi"), llm.ToolCallPart(call)}}}
	p := fixedProvider{resp: want}
	req := &llm.Request{Messages: []llm.Message{llm.UserText("q")}}
	if resp, s := Send(t, p, req, false); resp != want || s.Response != nil || s.Text != "" {
		t.Errorf("Complete: %v, %+v", resp, s)
	}
	if resp, s := Send(t, p, req, true); resp != want || s.Response != want || s.Text != "hi" || len(s.Calls) != 1 {
		t.Errorf("Stream: %v, %+v", resp, s)
	}
}
