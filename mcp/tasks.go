package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoagent-go/autoagent/tool"
)

// MCP tasks (protocol 2025-11-25, SEP-1686): a tool whose
// execution.taskSupport is "required" is not answered by tools/call; the
// call creates a task, which the client polls (tasks/get), reads
// (tasks/result) and may cancel (tasks/cancel). The MCP SDK this package
// is built on does not speak tasks, so the client sends those requests on
// the session's own connection, under request IDs of its own, and takes
// their answers off it before the SDK reads the rest (taskConn). Over
// streamable HTTP, where the SDK's connection cannot be wrapped, each of
// those requests is a POST of its own in the session, and the SDK's
// tools/list answers are read as they pass through the HTTP client
// (tasks_http.go).

// taskIDPrefix marks the requests this package sends itself.
const taskIDPrefix = "autoagent-task-"

// defaultPollInterval is used when the server suggests none.
const defaultPollInterval = time.Second

// tasks is a session's side channel and what it learned of the tools.
type tasks struct {
	mu       sync.Mutex
	conn     sdk.Connection
	next     int
	pending  map[string]chan *jsonrpc.Response
	lists    map[any]bool           // IDs of the SDK's tools/list requests
	required map[string]bool        // server tool names whose taskSupport is "required"
	http     *httpTasks             // the side channel of a streamable HTTP session, or nil
	taps     map[chan struct{}]bool // tools/list answers over HTTP not yet noted
}

func newTasks() *tasks {
	return &tasks{pending: map[string]chan *jsonrpc.Response{}, lists: map[any]bool{}, required: map[string]bool{}, taps: map[chan struct{}]bool{}}
}

// transport wraps the SDK's transport so the session's connection is a
// taskConn.
func (ts *tasks) transport(base sdk.Transport) sdk.Transport { return taskTransport{base, ts} }

type taskTransport struct {
	base sdk.Transport
	ts   *tasks
}

func (t taskTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.ts.mu.Lock()
	t.ts.conn = c
	t.ts.mu.Unlock()
	return &taskConn{Connection: c, ts: t.ts}, nil
}

// taskConn is the session's connection: it notes which tools require
// tasks from the tools/list answers it passes on, delivers the answers to
// the client's own requests, and drops task status notifications (the
// client polls).
type taskConn struct {
	sdk.Connection
	ts *tasks
}

func (c *taskConn) Write(ctx context.Context, m jsonrpc.Message) error {
	c.ts.sent(m)
	return c.Connection.Write(ctx, m)
}

func (c *taskConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		m, err := c.Connection.Read(ctx)
		if err != nil {
			return nil, err
		}
		if c.ts.received(m) {
			return m, nil
		}
	}
}

// sent notes a message the SDK sends: the IDs of its tools/list requests,
// whose answers say which tools require tasks.
func (ts *tasks) sent(m jsonrpc.Message) {
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		ts.mu.Lock()
		ts.lists[req.ID.Raw()] = true
		ts.mu.Unlock()
	}
}

// received looks at a message from the server before the SDK does: it
// delivers answers to the client's own requests and drops task status
// notifications (the client polls), reporting false for those, and notes
// the tools/list answers the SDK gets.
func (ts *tasks) received(m jsonrpc.Message) (forSDK bool) {
	switch m := m.(type) {
	case *jsonrpc.Response:
		if id, ok := m.ID.Raw().(string); ok && strings.HasPrefix(id, taskIDPrefix) {
			ts.deliver(id, m)
			return false
		}
		ts.noteList(m)
	case *jsonrpc.Request:
		if m.Method == "notifications/tasks/status" {
			return false
		}
	}
	return true
}

func (ts *tasks) deliver(id string, m *jsonrpc.Response) {
	ts.mu.Lock()
	ch := ts.pending[id]
	delete(ts.pending, id)
	ts.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// noteList records the taskSupport of the tools in an answer to one of
// the SDK's tools/list requests.
func (ts *tasks) noteList(m *jsonrpc.Response) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if !ts.lists[m.ID.Raw()] {
		return
	}
	delete(ts.lists, m.ID.Raw())
	var page struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(m.Result, &page) != nil {
		return
	}
	for _, t := range page.Tools {
		ts.required[t.Name] = t.Execution != nil && t.Execution.TaskSupport == "required"
	}
}

func (ts *tasks) requires(name string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.required[name]
}

// call sends one request of the client's own and waits for its answer:
// over HTTP in a POST of its own (tasks_http.go), otherwise on the
// session's connection.
func (ts *tasks) call(ctx context.Context, method string, params any, result any) error {
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	ts.mu.Lock()
	ts.next++
	id := fmt.Sprintf("%s%d", taskIDPrefix, ts.next)
	ts.mu.Unlock()
	rid, err := jsonrpc.MakeID(id)
	if err != nil {
		return err
	}
	req := &jsonrpc.Request{ID: rid, Method: method, Params: raw}
	var resp *jsonrpc.Response
	if ts.http != nil {
		resp, err = ts.http.post(ctx, req)
	} else {
		resp, err = ts.send(ctx, id, req)
	}
	if err != nil {
		return err
	}
	if resp.Error != nil {
		return resp.Error
	}
	if result != nil {
		return json.Unmarshal(resp.Result, result)
	}
	return nil
}

// send writes req on the session's connection and waits for the answer
// taskConn.Read delivers.
func (ts *tasks) send(ctx context.Context, id string, req *jsonrpc.Request) (*jsonrpc.Response, error) {
	ch := make(chan *jsonrpc.Response, 1)
	ts.mu.Lock()
	conn := ts.conn
	ts.pending[id] = ch
	ts.mu.Unlock()
	defer func() {
		ts.mu.Lock()
		delete(ts.pending, id)
		ts.mu.Unlock()
	}()
	if conn == nil {
		return nil, ErrClosed
	}
	if err := conn.Write(ctx, req); err != nil {
		return nil, err
	}
	select {
	case resp := <-ch:
		return resp, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// taskState is MCP's Task.
type taskState struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

func (s taskState) terminal() bool {
	return s.Status == "completed" || s.Status == "failed" || s.Status == "cancelled"
}

// taskTTL is how long the client asks the server to keep a task's result.
const taskTTL = 10 * time.Minute

// callAsTask runs a tool that requires tasks: it creates the task, polls
// it until it ends, and reads its result; when ctx ends first, it cancels
// the task. Each request is bounded by the client's timeout, the whole by
// ctx.
func (t *remoteTool) callAsTask(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	c := t.c
	ts := c.tasks
	var created struct {
		Task taskState `json:"task"`
	}
	req := map[string]any{"name": t.remote, "arguments": args, "task": map[string]any{"ttl": taskTTL.Milliseconds()}}
	if err := c.taskRequest(ctx, "tools/call", t.remote, req, &created); err != nil {
		return t.taskFailure(ctx, err)
	}
	st := created.Task
	if st.TaskID == "" {
		return tool.Result{}, &ServerError{Server: c.label, Method: "tools/call", Tool: t.remote, Err: errors.New("the answer to a task-augmented call holds no task")}
	}
	for !st.terminal() {
		wait := time.Duration(st.PollInterval) * time.Millisecond
		if wait <= 0 {
			wait = defaultPollInterval
		}
		select {
		case <-ctx.Done():
			// The caller gave up: so does the server's task.
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			_ = ts.call(cctx, "tasks/cancel", map[string]string{"taskId": st.TaskID}, nil)
			cancel()
			return tool.Errorf("MCP tool %s: cancelled (task %s)", t.remote, st.TaskID), ctx.Err()
		case <-time.After(min(wait, 10*time.Second)):
		}
		if err := c.taskRequest(ctx, "tasks/get", t.remote, map[string]string{"taskId": st.TaskID}, &st); err != nil {
			return t.taskFailure(ctx, err)
		}
	}
	if st.Status == "cancelled" {
		return tool.Errorf("MCP tool %s: its task was cancelled by the server: %s", t.remote, st.StatusMessage), nil
	}
	var res sdk.CallToolResult
	if err := c.taskRequest(ctx, "tasks/result", t.remote, map[string]string{"taskId": st.TaskID}, &res); err != nil {
		return t.taskFailure(ctx, err)
	}
	out, err := fromMCP(&res, t.remote)
	if err != nil {
		return tool.Result{}, &ServerError{Server: c.label, Method: "tasks/result", Tool: t.remote, Err: err}
	}
	if st.Status == "failed" {
		out.IsError = true
	}
	return out, nil
}

// taskRequest is one task request under the client's request timeout.
func (c *Client) taskRequest(ctx context.Context, method, toolName string, params, result any) error {
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	if err := c.tasks.call(rctx, method, params, result); err != nil {
		return c.serverError(ctx, rctx, method, toolName, err)
	}
	return nil
}

// taskFailure reports a failed task request as a call failure would be.
func (t *remoteTool) taskFailure(ctx context.Context, err error) (tool.Result, error) {
	var werr *jsonrpcError
	if errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams && ctx.Err() == nil {
		return tool.Errorf("MCP server %s refused the call to %s: %s", t.c.label, t.remote, werr.Message), nil
	}
	return tool.Result{}, err
}
