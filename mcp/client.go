package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoagent-go/autoagent/tool"
)

// ClientOptions say which MCP server to connect to and how to mount its
// tools. Exactly one of Command, URL and Stream must be set; every other
// field has a working zero value.
type ClientOptions struct {
	// Command runs the server as a subprocess speaking MCP on its standard
	// input and output: Command[0] is the program (looked up in PATH),
	// the rest its arguments. Close stops it, and every process it started.
	Command []string
	// Dir is the subprocess's working directory; "" means the current one.
	Dir string
	// Env holds KEY=VALUE pairs for the subprocess. They are added to the
	// few variables it inherits by default (HOME, LOGNAME, PATH, SHELL,
	// TERM, USER; on Windows the system's equivalents), never the whole
	// environment of the host, which may hold API keys.
	Env []string
	// InheritEnv passes the host's whole environment to the subprocess,
	// with Env over it.
	InheritEnv bool
	// Stderr, when set, receives what the subprocess writes on its standard
	// error. Its last lines are kept in any case, for error messages.
	Stderr io.Writer

	// URL is the endpoint of a server speaking MCP's streamable HTTP
	// transport, such as "http://127.0.0.1:8080/mcp".
	URL string
	// Header is added to every HTTP request (an Authorization header, for
	// example).
	Header http.Header
	// HTTPClient sends the HTTP requests; nil means a client of the
	// client's own without an overall timeout (the server's event stream
	// is long-lived; Timeout bounds each request instead), whose
	// connections Close closes.
	HTTPClient *http.Client

	// Stream is an established connection to a server speaking
	// newline-delimited JSON-RPC (a pipe to an in-process [Server], a
	// socket). Close closes it.
	Stream io.ReadWriteCloser

	// Prefix is put before every tool name, so tools of several servers,
	// and host tools, do not collide ("github_" turns "search" into
	// "github_search"). Names are then made acceptable to every model
	// provider: characters outside [A-Za-z0-9_-] become '_'.
	Prefix string
	// Include, when not empty, mounts only the tools named (server names,
	// before Prefix). Exclude leaves out the tools named.
	Include, Exclude []string

	// Trusted says the server's results may be read as instructions, not
	// only as data. By default every tool is flagged [tool.Flags.Untrusted]:
	// its results are framed as untrusted content and taint the run, and
	// the server's annotations are ignored, since a server's own claims
	// about itself prove nothing. With Trusted, a tool is untrusted only
	// when it says it reaches an open world (openWorldHint true), and
	// idempotentHint or readOnlyHint mark it idempotent unless Egress is
	// set (a tool that can send data out has effects).
	Trusted bool
	// Egress flags every tool as able to send data out of the system
	// ([tool.Flags.Egress]), which the loop's lethal-trifecta guard stops
	// once a run is tainted. Set it for a remote server, or for a local
	// one whose tools reach the network.
	Egress bool
	// Permissions are added to every tool's permission labels, after
	// "mcp", which every mounted tool carries.
	Permissions []string

	// Timeout bounds each request to the server (the handshake, listing
	// tools, a tool call), on top of the caller's context; 0 means 60
	// seconds, a negative value no bound but the context.
	Timeout time.Duration
	// OnChange, when set, is called after every refresh of the tool set
	// that changed something or failed, from the goroutine that refreshed.
	// Refreshes follow the server's tools/list_changed notifications and
	// calls to [Client.Refresh].
	OnChange func(Change)
}

func (o *ClientOptions) validate() error {
	n := 0
	if len(o.Command) > 0 {
		n++
		if o.Command[0] == "" {
			return errors.New("mcp: ClientOptions.Command[0] is empty: want the program to run")
		}
	}
	if o.URL != "" {
		n++
		u, err := url.Parse(o.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("mcp: ClientOptions.URL %q: want an http:// or https:// URL", o.URL)
		}
	}
	if o.Stream != nil {
		n++
	}
	if n != 1 {
		return fmt.Errorf("mcp: ClientOptions must set exactly one of Command, URL and Stream (%d set)", n)
	}
	if o.Timeout == 0 {
		o.Timeout = 60 * time.Second
	}
	return nil
}

// Change describes what one refresh of a client's tool set changed.
type Change struct {
	// Added, Removed and Replaced are exposed tool names: new, gone, and
	// changed (description, schema or flags).
	Added, Removed, Replaced []string
	// Err reports a refresh that failed (the previous tool set stays),
	// tools that could not be mounted, and tools a published registry
	// refused; nil when none.
	Err error
}

// Empty reports whether nothing changed.
func (c Change) Empty() bool {
	return len(c.Added)+len(c.Removed)+len(c.Replaced) == 0 && c.Err == nil
}

// ServerInfo is what the server said about itself when the session began.
type ServerInfo struct {
	Name, Version   string
	Title           string
	Instructions    string
	ProtocolVersion string
}

// clientProtocolVersion is the protocol version the client asks for. The
// SDK's default, 2026-07-28, first probes the server with server/discover,
// which costs every server of the 2025 generation (the reference servers,
// the conformance suite's, most in use) a failed round trip before the
// initialize handshake; 2025-11-25 is the latest version they know, and a
// server may still negotiate down from it.
const clientProtocolVersion = "2025-11-25"

// A Client is a session with one MCP server whose tools are mounted as
// [tool.Tool] values. It is safe for concurrent use; tool calls run in
// parallel.
type Client struct {
	opts      ClientOptions
	label     string // the server's name in errors
	session   *sdk.ClientSession
	tasks     *tasks     // MCP tasks, which the SDK does not speak (tasks.go)
	httpTasks *httpTasks // their side channel over streamable HTTP, or nil
	proc      *process   // nil unless the server is a subprocess
	idle      func()     // closes the idle connections of a transport the client made

	set       atomic.Pointer[toolSet]
	refreshMu sync.Mutex // serialises refreshes
	pubMu     sync.Mutex
	pubs      []*tool.Publication

	wake    chan struct{}   // a list_changed notification arrived
	bgCtx   context.Context // ends with Close
	stopBg  context.CancelFunc
	bg      sync.WaitGroup
	closed  atomic.Bool
	closeMu sync.Mutex
}

// Connect starts or reaches the server, performs the MCP handshake and
// lists its tools. The returned Client keeps its tool set current: when the
// server announces that its tools changed, it lists them again (see
// [ClientOptions.OnChange]). Close it when done.
//
// The error is a *[ServerError] when the server was reached but failed,
// wrapping the cause (the server's stderr tail is in it for a subprocess).
func Connect(ctx context.Context, opts ClientOptions) (*Client, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	c := &Client{opts: opts, wake: make(chan struct{}, 1)}
	c.bgCtx, c.stopBg = context.WithCancel(context.Background())
	c.set.Store(&toolSet{byName: map[string]*remoteTool{}})

	var transport sdk.Transport
	switch {
	case len(opts.Command) > 0:
		c.label = strings.Join(opts.Command, " ")
		p, err := startProcess(&c.opts)
		if err != nil {
			return nil, &ServerError{Server: c.label, Method: "initialize", Err: err}
		}
		c.proc = p
		transport = &sdk.IOTransport{Reader: io.NopCloser(p.stdout), Writer: stdinCloser{p}}
	case opts.URL != "":
		c.label = redactURL(opts.URL)
		hc := opts.HTTPClient
		if hc == nil {
			// A transport of its own, whose connections Close can end.
			tr := http.DefaultTransport.(*http.Transport).Clone()
			hc = &http.Client{Transport: tr}
			c.idle = tr.CloseIdleConnections
		}
		c.tasks = newTasks()
		var sdkClient *http.Client
		c.httpTasks, sdkClient = newHTTPTasks(c.tasks, withHeader(hc, opts.Header), opts.URL)
		transport = &sdk.StreamableClientTransport{Endpoint: opts.URL, HTTPClient: sdkClient}
	default:
		c.label = "stream"
		transport = &sdk.IOTransport{Reader: opts.Stream, Writer: opts.Stream}
	}

	client := sdk.NewClient(&sdk.Implementation{Name: "autoagent", Version: moduleVersion()}, &sdk.ClientOptions{
		// No roots, sampling or elicitation: a server gets nothing from us
		// but tool calls.
		Capabilities: &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			// Listing from inside the notification handler would wait on
			// the connection that delivers the answer: hand it off.
			select {
			case c.wake <- struct{}{}:
			default:
			}
		},
	})
	hctx, cancel := c.requestContext(ctx)
	defer cancel()
	if c.tasks == nil {
		// Over HTTP, the side channel is the HTTP client's (tasks_http.go).
		c.tasks = newTasks()
		transport = c.tasks.transport(transport)
	}
	session, err := client.Connect(hctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: clientProtocolVersion})
	if err != nil {
		err = c.serverError(ctx, hctx, "initialize", "", err)
		if c.proc != nil {
			c.proc.shutdown()
		}
		if c.idle != nil {
			c.idle()
		}
		c.stopBg()
		return nil, err
	}
	c.session = session
	if c.httpTasks != nil {
		c.httpTasks.session.Store(session)
	}
	if res := session.InitializeResult(); res != nil && res.ServerInfo != nil && res.ServerInfo.Name != "" {
		c.label = res.ServerInfo.Name
	}
	if _, err := c.Refresh(ctx); err != nil {
		c.Close()
		return nil, err
	}
	c.bg.Add(1)
	go c.watch()
	return c, nil
}

// Tools returns the mounted tools, in the server's order.
func (c *Client) Tools() []tool.Tool {
	s := c.set.Load()
	out := make([]tool.Tool, len(s.tools))
	for i, t := range s.tools {
		out[i] = t
	}
	return out
}

// Tool returns the mounted tool exposed as name.
func (c *Client) Tool(name string) (tool.Tool, bool) {
	t, ok := c.set.Load().byName[name]
	return t, ok
}

// Err reports the server's tools that are not mounted because their
// names collide once made acceptable to model providers ("a.b" and "a_b"
// both become "a_b"); nil when every tool is mounted.
func (c *Client) Err() error { return c.set.Load().err }

// ServerInfo returns what the server said about itself.
func (c *Client) ServerInfo() ServerInfo {
	res := c.session.InitializeResult()
	if res == nil {
		return ServerInfo{}
	}
	info := ServerInfo{Instructions: res.Instructions, ProtocolVersion: res.ProtocolVersion}
	if res.ServerInfo != nil {
		info.Name, info.Version, info.Title = res.ServerInfo.Name, res.ServerInfo.Version, res.ServerInfo.Title
	}
	return info
}

// Close ends the session: a subprocess has its input closed and is given
// time to exit before it is terminated, then killed, along with every
// process it started; an HTTP session is ended with the server. No
// goroutine of the client outlives Close. Calls in flight fail with an
// error; later calls of mounted tools return [ErrClosed]. Close is
// idempotent.
func (c *Client) Close() error {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.closed.Swap(true) {
		return nil
	}
	c.stopBg()
	var err error
	if c.session != nil {
		err = c.session.Close()
	}
	if c.proc != nil {
		c.proc.shutdown()
	}
	if c.idle != nil {
		c.idle()
	}
	c.bg.Wait()
	if errors.Is(err, sdk.ErrConnectionClosed) || c.proc != nil {
		// The server going away, or a subprocess exiting with a status
		// after its input closed, is how a session ends.
		err = nil
	}
	return err
}

// watch refreshes the tool set after list_changed notifications until
// Close.
func (c *Client) watch() {
	defer c.bg.Done()
	for {
		select {
		case <-c.bgCtx.Done():
			return
		case <-c.wake:
			if _, err := c.Refresh(c.bgCtx); err != nil && c.opts.OnChange != nil && !c.closed.Load() {
				c.opts.OnChange(Change{Err: err})
			}
		}
	}
}

// requestContext bounds one request by the client's timeout.
func (c *Client) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.opts.Timeout < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.opts.Timeout)
}

// serverError describes a failed request. parent is the caller's context
// and rctx the request's, so that a request cut short by the client's own
// timeout reads as the server not answering, while the caller's
// cancellation stays a plain context error.
func (c *Client) serverError(parent, rctx context.Context, method, toolName string, err error) error {
	if perr := parent.Err(); perr != nil {
		return fmt.Errorf("mcp: %s %s: %w", c.label, method, perr)
	}
	if c.closed.Load() {
		return fmt.Errorf("%w (%s %s)", ErrClosed, method, toolName)
	}
	se := &ServerError{Server: c.label, Method: method, Tool: toolName, Err: err}
	if rctx.Err() != nil {
		se.Err = fmt.Errorf("no answer within %v", c.opts.Timeout)
	}
	var werr *jsonrpcError
	if errors.As(err, &werr) {
		se.Code = werr.Code
	}
	if c.proc != nil {
		// A dying server closes the connection before it is reaped: give
		// the exit status a moment to be known.
		select {
		case <-c.proc.done:
		case <-time.After(100 * time.Millisecond):
		}
		if how := c.proc.exited(); how != "" {
			se.Err = fmt.Errorf("%w (the server process %s)", se.Err, how)
		}
		se.Stderr = c.proc.stderr.last(5)
	}
	return se
}

// redactURL drops what a URL may carry as secrets (user info, query) from
// the name used in messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}

// withHeader returns a client that adds header to each request of base.
func withHeader(base *http.Client, header http.Header) *http.Client {
	if len(header) == 0 {
		return base
	}
	cl := *base
	rt := cl.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	cl.Transport = headerTransport{base: rt, header: header.Clone()}
	return &cl
}

type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range t.header {
		r.Header[k] = slices.Clone(vs)
	}
	return t.base.RoundTrip(r)
}
