package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

// taskServer is a streamable HTTP MCP server written out by hand, which
// answers every request as JSON (the reference server answers with event
// streams) and has one tool that requires tasks.
type taskServer struct {
	mu       sync.Mutex
	methods  []string // method, session and protocol headers of each request
	polls    int
	brokenAt string // a method whose answer is malformed
}

func (s *taskServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	body, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.methods = append(s.methods, req.Method+" session="+r.Header.Get("Mcp-Session-Id")+" version="+r.Header.Get("Mcp-Protocol-Version"))
	broken := s.brokenAt == req.Method
	s.mu.Unlock()
	if req.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result string
	switch req.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", "sess-1")
		result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"task-server","version":"1"}}`
	case "tools/list":
		result = `{"tools":[{"name":"slow","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}]}`
	case "tools/call":
		if !strings.Contains(string(req.Params), `"task"`) {
			result = `{"content":[{"type":"text","text":"called without a task"}],"isError":true}`
			break
		}
		result = `{"task":{"taskId":"t-1","status":"working","pollInterval":5}}`
	case "tasks/get":
		s.mu.Lock()
		s.polls++
		status := "working"
		if s.polls >= 2 {
			status = "completed"
		}
		s.mu.Unlock()
		result = `{"taskId":"t-1","status":"` + status + `","pollInterval":5}`
	case "tasks/result":
		result = `{"content":[{"type":"text","text":"slow result"}]}`
	default:
		result = `{}`
	}
	w.Header().Set("Content-Type", "application/json")
	if broken {
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`)
		return
	}
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":`+result+`}`)
}

func TestTasksOverHTTPWithJSONAnswers(t *testing.T) {
	ts := &taskServer{}
	hs := httptest.NewServer(ts)
	defer hs.Close()
	// The first call right after Connect is a task: the taskSupport read
	// off the SDK's listing is known by then. Fresh sessions, because
	// that reading runs beside the SDK's own.
	var c *mcp.Client
	for i := range 5 {
		var err error
		c, err = mcp.Connect(t.Context(), mcp.ClientOptions{URL: hs.URL})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		slow, ok := c.Tool("slow")
		if !ok {
			t.Fatalf("tools = %v", toolNames(c.Tools()))
		}
		ts.mu.Lock()
		ts.polls = 0
		ts.mu.Unlock()
		if res := mustCall(t, slow, `{}`); res.IsError || res.Text() != "slow result" {
			t.Fatalf("session %d: slow = %+v", i, res)
		}
	}
	slow, _ := c.Tool("slow")
	ts.mu.Lock()
	methods := strings.Join(ts.methods, "\n")
	ts.mu.Unlock()
	for _, want := range []string{
		"tools/call session=sess-1 version=2025-11-25",
		"tasks/get session=sess-1 version=2025-11-25",
		"tasks/result session=sess-1 version=2025-11-25",
	} {
		if !strings.Contains(methods, want) {
			t.Errorf("no %q among the requests:\n%s", want, methods)
		}
	}

	// A malformed answer to a task request is the server's failure, said
	// as such, and the session goes on.
	ts.mu.Lock()
	ts.brokenAt, ts.polls = "tasks/get", 0
	ts.mu.Unlock()
	_, err := slow.Call(t.Context(), tool.Call{Arguments: json.RawMessage(`{}`)})
	if err == nil || !strings.Contains(err.Error(), "malformed JSON-RPC message") || !strings.Contains(err.Error(), "tasks/get") {
		t.Fatalf("a malformed answer: %v", err)
	}
	ts.mu.Lock()
	ts.brokenAt = ""
	ts.mu.Unlock()
	if res := mustCall(t, slow, `{}`); res.Text() != "slow result" {
		t.Errorf("after a malformed answer: %+v", res)
	}
}
