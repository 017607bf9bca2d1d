package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoagent-go/autoagent/tool"
)

// ServerOptions configure a [Server]. The zero value serves as
// "autoagent" at this module's version.
type ServerOptions struct {
	// Name and Version identify the server in the MCP handshake; ""
	// means "autoagent" and the version of this module in the binary.
	Name, Version string
	// Instructions, when set, tell clients (and their models) how to use
	// the server's tools.
	Instructions string
	// DrainTimeout bounds how long ServeIO, at the end of its input, waits
	// for the requests it has read to be answered (a client may write its
	// requests and close its end at once, as a shell pipe does);
	// DefaultDrainTimeout when zero, no wait when negative.
	DrainTimeout time.Duration
	// SessionTimeout closes an HTTP session that made no request for this
	// long; DefaultSessionTimeout when zero, never when negative.
	SessionTimeout time.Duration
	// MaxSessions bounds the HTTP sessions open at once: a client asking
	// for one more is answered 503 until one ends; DefaultMaxSessions when
	// zero, no bound when negative. Each session holds some 14 KB, and
	// nothing else bounded them (60 000 in 49 s grew a server to 872 MB:
	// found by attacking our own sandbox).
	MaxSessions int
	// TrustedClients runs the clients' calls as a person's own: untainted
	// until a tool reports untrusted content. By default every call is
	// tainted from its start (tool.TaintScope): a client's arguments come
	// from another agent's model, which may have read anything, so what a
	// served tool writes for it (a kv value, a memory fact) stays
	// untrusted when an autoagent run reads it back.
	TrustedClients bool
}

// The defaults of ServerOptions.SessionTimeout and MaxSessions.
const (
	DefaultSessionTimeout = 30 * time.Minute
	DefaultMaxSessions    = 1024
)

// DefaultDrainTimeout is ServerOptions.DrainTimeout's default: longer than
// a sandboxed tool's default time limit, so a piped call is answered.
const DefaultDrainTimeout = 30 * time.Second

// A Server serves a set of tools over MCP: on standard input and output
// ([Server.ServeStdio]), on any stream ([Server.ServeIO]) and over the
// streamable HTTP transport (a Server is an [http.Handler]). One Server
// serves any number of sessions at once, all seeing the same tool set.
// It is safe for concurrent use.
type Server struct {
	srv   *sdk.Server
	drain time.Duration // ServerOptions.DrainTimeout, defaulted
	opts  ServerOptions

	mu    sync.Mutex
	tools map[string]*servedTool
	// listing is held by SetTools, SetPrompts and SetResources while they
	// change the lists one item at a time, and read by every list request,
	// so a client never lists a set half changed (the SDK notifies a change
	// 10 ms after the last one, and a loaded machine can take longer than
	// that between two items).
	listing sync.RWMutex
	cat     catalog // prompts and resources

	calls atomic.Uint64

	httpOnce sync.Once
	http     http.Handler
}

// servedTool is a tool as the server offers it.
type servedTool struct {
	t   tool.Tool
	sig []byte // the MCP tool definition, to tell a changed tool from the same one
}

// NewServer returns a server with no tools; give it some with
// [Server.SetTools].
func NewServer(opts ServerOptions) *Server {
	if opts.Name == "" {
		opts.Name = "autoagent"
	}
	if opts.Version == "" {
		opts.Version = moduleVersion()
	}
	opts.SessionTimeout = cmp.Or(opts.SessionTimeout, DefaultSessionTimeout)
	opts.MaxSessions = cmp.Or(opts.MaxSessions, DefaultMaxSessions)
	s := &Server{tools: map[string]*servedTool{}, drain: cmp.Or(opts.DrainTimeout, DefaultDrainTimeout), opts: opts}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: opts.Name, Version: opts.Version}, &sdk.ServerOptions{
		Instructions: opts.Instructions,
		// Tools, prompts and resources, announced even while there are
		// none, since they can appear later; list changes are notified
		// to every session.
		Capabilities: &sdk.ServerCapabilities{
			Tools:       &sdk.ToolCapabilities{ListChanged: true},
			Prompts:     &sdk.PromptCapabilities{ListChanged: true},
			Resources:   &sdk.ResourceCapabilities{ListChanged: true},
			Completions: &sdk.CompletionCapabilities{},
		},
		CompletionHandler: s.complete,
	})
	s.srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if strings.HasSuffix(method, "/list") {
				s.listing.RLock()
				defer s.listing.RUnlock()
			}
			return next(ctx, method, req)
		}
	})
	return s
}

// SetTools makes tools the served set: new tools are offered, gone ones
// withdrawn, changed ones (description, schemas, flags) replaced, and every
// connected client is sent notifications/tools/list_changed (once for a
// burst of changes). A tool whose definition did not change keeps being
// offered without a notification, even when tools holds a new value for it.
//
// A tool that cannot be offered over MCP is left out and named in the error
// (wrapping [ErrToolRefused]): an input schema that is not a JSON object
// schema, or a name two tools share (neither is served). The others are
// served regardless of the error.
//
// Calls go to the tool that is current when they arrive; a call already
// running on a withdrawn tool finishes.
func (s *Server) SetTools(tools []tool.Tool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listing.Lock()
	defer s.listing.Unlock()
	var errs []error
	count := map[string]int{}
	for _, t := range tools {
		count[t.Spec().Name]++
	}
	next := map[string]*servedTool{}
	defs := map[string]*sdk.Tool{}
	for _, t := range tools {
		name := t.Spec().Name
		switch n := count[name]; {
		case n > 1:
			errs = append(errs, fmt.Errorf("%w: %d tools are named %q: none of them is served", ErrToolRefused, n, name))
			count[name] = -1 // reported once
			continue
		case n < 0:
			continue
		}
		def, err := definition(t)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %v", ErrToolRefused, name, err))
			continue
		}
		sig, err := json.Marshal(def)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: %s: %v", ErrToolRefused, name, err))
			continue
		}
		next[name] = &servedTool{t: t, sig: sig}
		defs[name] = def
	}
	var gone []string
	for name := range s.tools {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	if len(gone) > 0 {
		s.srv.RemoveTools(gone...)
	}
	for _, t := range tools {
		name := t.Spec().Name
		st, ok := next[name]
		if !ok {
			continue
		}
		if cur, ok := s.tools[name]; ok && bytes.Equal(cur.sig, st.sig) {
			continue
		}
		s.srv.AddTool(defs[name], s.handler(name))
	}
	s.tools = next
	return errors.Join(errs...)
}

// definition is the MCP tool definition of t.
func definition(t tool.Tool) (*sdk.Tool, error) {
	spec := t.Spec()
	in, err := objectSchema(spec.InputSchema)
	if err != nil {
		return nil, err
	}
	def := &sdk.Tool{Name: spec.Name, Description: spec.Description, InputSchema: in}
	if out := bytes.TrimSpace(spec.OutputSchema); len(out) > 0 && !bytes.Equal(out, []byte("null")) {
		if !json.Valid(out) {
			return nil, errors.New("output schema is not valid JSON")
		}
		def.OutputSchema = json.RawMessage(out)
	}
	def.Annotations = annotations(tool.FlagsOf(t))
	return def, nil
}

// objectSchema returns the input schema as MCP requires it: a JSON Schema
// of type "object". A tool's arguments are always a JSON object, so an
// empty schema, or one that leaves out the type, is given it; the document
// is otherwise passed through byte for byte, so that keywords such as
// $schema and $defs reach the client.
func objectSchema(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, errors.New("input schema is not a JSON object")
	}
	switch typ := m["type"]; typ {
	case "object":
		return raw, nil
	case nil:
		m["type"] = "object"
		return json.Marshal(m)
	default:
		return nil, fmt.Errorf("input schema has type %v: MCP tools take a JSON object", typ)
	}
}

// annotations tells MCP clients what the loop knows of a tool: a tool
// whose results come from outside or that can send data out reaches an
// open world; the others are closed. Nothing is claimed about
// destructiveness, which flags do not record.
func annotations(f tool.Flags) *sdk.ToolAnnotations {
	open := f.Untrusted || f.Egress
	return &sdk.ToolAnnotations{IdempotentHint: f.Idempotent, OpenWorldHint: &open}
}

// handler calls the served tool named name. A tool's failure is an error
// result (isError) the client's model reads; so is an infrastructure
// error, which a remote client can do nothing else with.
func (s *Server) handler(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		s.mu.Lock()
		st := s.tools[name]
		s.mu.Unlock()
		if st == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
		}
		call := tool.Call{ID: fmt.Sprintf("mcp-%d", s.calls.Add(1)), Name: name, Arguments: req.Params.Arguments}
		scope := &callScope{}
		if !s.opts.TrustedClients {
			scope.tainted.Store(true)
		}
		res, err := tool.SafeCall(tool.WithTaintScope(ctx, scope), st.t, call)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return toMCP(tool.Errorf("tool %s failed: %v", name, err)), nil
		}
		return toMCP(res), nil
	}
}

// callScope is the taint of one client's call (see
// ServerOptions.TrustedClients).
type callScope struct{ tainted atomic.Bool }

func (c *callScope) Tainted() bool { return c.tainted.Load() }
func (c *callScope) Taint()        { c.tainted.Store(true) }

// ServeStdio serves one session on the process's standard input and
// output, until the client closes its end (it returns nil) or ctx ends
// (it returns ctx's error). Nothing else may write to standard output
// meanwhile.
func (s *Server) ServeStdio(ctx context.Context) error {
	return ended(s.srv.Run(ctx, &sdk.StdioTransport{}))
}

// ServeIO serves one session of newline-delimited JSON-RPC read from r and
// written to w, until the client closes its end (it returns nil, once
// every request read has been answered) or ctx ends (it returns ctx's
// error). r and w are closed on return when they
// are io.Closers.
func (s *Server) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	rc, ok := r.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(r)
	}
	wc, ok := w.(io.WriteCloser)
	if !ok {
		wc = nopWriteCloser{w}
	}
	d := newDrain(ctx, s.drain, rc, wc)
	return ended(s.srv.Run(ctx, &sdk.IOTransport{Reader: d.reader(), Writer: d.writer()}))
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// ended reads a session's end: the client going away is how a session
// ends normally, including while the server writes to it (a list change
// notified as the client hangs up: a closed pipe, EPIPE).
func ended(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) {
		return nil
	}
	return err
}

// ServeHTTP serves MCP's streamable HTTP transport: mount the Server at
// the endpoint path ("/mcp" by convention). Each client gets a session
// (Mcp-Session-Id) with a stream on which list changes are notified.
//
// Requests that arrive on a loopback address with a Host header naming
// another host are refused (DNS rebinding), as are cross-origin requests
// from browsers. There is no authentication: on anything but a loopback
// address, put the handler behind one.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.httpOnce.Do(func() {
		h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv },
			&sdk.StreamableHTTPOptions{SessionTimeout: max(0, s.opts.SessionTimeout)})
		s.http = http.NewCrossOriginProtection().Handler(h)
	})
	// A request without a session asks for a new one.
	if limit := s.opts.MaxSessions; limit > 0 && r.Header.Get("Mcp-Session-Id") == "" && r.Method == http.MethodPost {
		n := 0
		for range s.srv.Sessions() {
			n++
		}
		if n >= limit {
			http.Error(w, fmt.Sprintf("%d MCP sessions are open, as many as this server serves at once: try again when one ends", n), http.StatusServiceUnavailable)
			return
		}
	}
	s.http.ServeHTTP(w, r)
}

// Close ends every session: stdio and stream sessions return from their
// Serve call, HTTP sessions are closed and their streams end, so that an
// http.Server can shut down. The Server can serve new sessions afterwards.
func (s *Server) Close() error {
	var errs []error
	for ss := range s.srv.Sessions() {
		if err := ss.Close(); err != nil && !errors.Is(err, sdk.ErrConnectionClosed) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
