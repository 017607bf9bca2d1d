package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"maps"
	"mime"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoagent-go/autoagent/internal/sse"
)

// MCP tasks over streamable HTTP. The SDK's HTTP connection takes hooks
// of its own that a wrapping Connection cannot forward, so the two halves
// of taskConn are done at the HTTP layer instead: the client's own task
// requests are POSTs of their own in the session (the transport's rules:
// the session ID and protocol version headers, an answer as JSON or as an
// event stream), and the SDK's tools/list answers are read as they pass
// through the HTTP client, for the tools' taskSupport.

// maxHTTPMessage bounds one message the client reads for itself.
const maxHTTPMessage = sse.DefaultMaxEventSize

// httpTasks is the side channel of one streamable HTTP session.
type httpTasks struct {
	client   *http.Client // the session's own, with the caller's headers
	endpoint string
	session  atomic.Pointer[sdk.ClientSession] // set once connected
}

// newHTTPTasks returns the side channel of a session at endpoint made
// with hc, and the client the SDK is to use: hc with the tap that notes
// the tools/list traffic for ts.
func newHTTPTasks(ts *tasks, hc *http.Client, endpoint string) (*httpTasks, *http.Client) {
	tapped := *hc
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	tapped.Transport = listTap{base: base, ts: ts}
	h := &httpTasks{client: hc, endpoint: endpoint}
	ts.http = h
	return h, &tapped
}

// post sends req in a POST of its own and reads its answer.
func (h *httpTasks) post(ctx context.Context, req *jsonrpc.Request) (*jsonrpc.Response, error) {
	s := h.session.Load()
	if s == nil {
		return nil, ErrClosed
	}
	body, err := jsonrpc.EncodeMessage(req)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	if id := s.ID(); id != "" {
		hr.Header.Set("Mcp-Session-Id", id)
	}
	if res := s.InitializeResult(); res != nil && res.ProtocolVersion != "" {
		hr.Header.Set("Mcp-Protocol-Version", res.ProtocolVersion)
	}
	resp, err := h.client.Do(hr)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	ctype := mediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK && ctype != "application/json" {
		snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("HTTP %s: %s", resp.Status, bytes.TrimSpace(snippet))
	}
	for m, err := range httpMessages(ctype, resp.Body) {
		if err != nil {
			return nil, fmt.Errorf("HTTP %s: %w", resp.Status, err)
		}
		// Requests and notifications on the request's stream (progress,
		// task status) are not asked for: the client polls.
		if r, ok := m.(*jsonrpc.Response); ok && r.ID.Raw() == req.ID.Raw() {
			return r, nil
		}
	}
	return nil, fmt.Errorf("HTTP %s: the server's answer holds no response to %s", resp.Status, req.Method)
}

// httpMessages reads the JSON-RPC messages of an HTTP body: one, as
// JSON, or one per event of an event stream. Each is bounded by
// maxHTTPMessage.
func httpMessages(ctype string, body io.Reader) iter.Seq2[jsonrpc.Message, error] {
	return func(yield func(jsonrpc.Message, error) bool) {
		switch ctype {
		case "application/json":
			data, err := io.ReadAll(io.LimitReader(body, maxHTTPMessage+1))
			if err == nil && len(data) > maxHTTPMessage {
				err = fmt.Errorf("a message larger than %d MiB", maxHTTPMessage>>20)
			}
			if err != nil {
				yield(nil, err)
				return
			}
			yield(decodeHTTPMessage(data))
		case "text/event-stream":
			for ev, err := range (sse.Reader{MaxEventSize: maxHTTPMessage}).Events(body) {
				if err != nil {
					yield(nil, err)
					return
				}
				if ev.Data == "" {
					continue // a priming event, or a keep-alive
				}
				if !yield(decodeHTTPMessage([]byte(ev.Data))) {
					return
				}
			}
		default:
			yield(nil, fmt.Errorf("unsupported content type %q", ctype))
		}
	}
}

func decodeHTTPMessage(data []byte) (jsonrpc.Message, error) {
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return nil, fmt.Errorf("a malformed JSON-RPC message: %w", err)
	}
	return m, nil
}

func mediaType(v string) string {
	t, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return t
}

// listTap is the SDK's HTTP transport for a session: it shows the tasks
// side the SDK's tools/list requests and their answers, leaving both
// unchanged.
type listTap struct {
	base http.RoundTripper
	ts   *tasks
}

func (t listTap) RoundTrip(r *http.Request) (*http.Response, error) {
	id, list := t.noteRequest(r)
	resp, err := t.base.RoundTrip(r)
	if err != nil || !list || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	// The SDK reads the body as it always does; what it reads is copied
	// to a reader of the same messages, which notes the answer. Refresh
	// waits for that (tasks.settle), so a tool is never called before its
	// taskSupport is known.
	pr, pw := io.Pipe()
	ctype := mediaType(resp.Header.Get("Content-Type"))
	done := t.ts.tap()
	go func() {
		defer done()
		for m, err := range httpMessages(ctype, pr) {
			if err != nil {
				break
			}
			t.ts.received(m)
			if r, ok := m.(*jsonrpc.Response); ok && r.ID.Raw() == id.Raw() {
				done()
				break
			}
		}
		// Whatever follows is the SDK's alone: keep taking it so that the
		// copy never holds the SDK's reads up.
		_, _ = io.Copy(io.Discard, pr)
	}()
	resp.Body = &tappedBody{body: resp.Body, copy: pw}
	return resp, nil
}

// noteRequest shows the tasks side a POSTed message, reporting whether it
// was a tools/list request, and its ID.
func (t listTap) noteRequest(r *http.Request) (jsonrpc.ID, bool) {
	if r.Method != http.MethodPost || r.GetBody == nil {
		return jsonrpc.ID{}, false
	}
	body, err := r.GetBody()
	if err != nil {
		return jsonrpc.ID{}, false
	}
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, 1<<20))
	if err != nil || !bytes.Contains(data, []byte(`"tools/list"`)) {
		// Only a listing is of interest: the rest (tool calls with their
		// arguments) is not decoded a second time.
		return jsonrpc.ID{}, false
	}
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return jsonrpc.ID{}, false
	}
	t.ts.sent(m)
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.Method != "tools/list" || !req.ID.IsValid() {
		return jsonrpc.ID{}, false
	}
	return req.ID, true
}

// tap registers a tools/list answer being read; the function it returns
// says it has been (it may be called more than once).
func (ts *tasks) tap() (done func()) {
	ch := make(chan struct{})
	ts.mu.Lock()
	ts.taps[ch] = true
	ts.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			ts.mu.Lock()
			delete(ts.taps, ch)
			ts.mu.Unlock()
			close(ch)
		})
	}
}

// settle waits until the tools/list answers being read have been noted.
func (ts *tasks) settle(ctx context.Context) error {
	ts.mu.Lock()
	chs := slices.Collect(maps.Keys(ts.taps))
	ts.mu.Unlock()
	for _, ch := range chs {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// tappedBody is a response body whose bytes are copied, as they are read,
// to the tap's reader, which sees the end of the body when the SDK does.
type tappedBody struct {
	body io.ReadCloser
	copy *io.PipeWriter
}

func (b *tappedBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if n > 0 {
		_, _ = b.copy.Write(p[:n])
	}
	if err != nil {
		b.copy.CloseWithError(err)
	}
	return n, err
}

func (b *tappedBody) Close() error {
	b.copy.CloseWithError(io.EOF)
	return b.body.Close()
}
