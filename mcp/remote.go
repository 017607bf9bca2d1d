package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
)

type jsonrpcError = jsonrpc.Error

// remoteTool is one tool of an MCP server, mounted as a tool.Tool.
type remoteTool struct {
	c      *Client
	spec   llm.ToolSpec
	remote string       // the server's name for the tool
	schema *tool.Schema // nil when the server's schema does not compile here
	flags  tool.Flags
	sig    []byte // spec and flags, to tell a changed tool from the same one
}

var (
	_ tool.Tool    = (*remoteTool)(nil)
	_ tool.Flagger = (*remoteTool)(nil)
)

func (t *remoteTool) Spec() llm.ToolSpec { return t.spec }

// Flags returns the flags the client's options and the server's
// annotations give the tool (see [ClientOptions.Trusted]).
func (t *remoteTool) Flags() tool.Flags {
	f := t.flags
	f.Permissions = slices.Clone(f.Permissions)
	return f
}

// Call calls the tool on the server. Arguments that do not satisfy the
// tool's input schema, a call the server refuses as invalid (an unknown
// tool, bad arguments) and a tool's own failure (isError) are error
// results the model sees. A broken connection, a server that does not
// answer within the client's timeout or answers with another JSON-RPC
// error, and a closed client are Go errors: the infrastructure failed.
func (t *remoteTool) Call(ctx context.Context, call tool.Call) (tool.Result, error) {
	c := t.c
	if c.closed.Load() {
		return tool.Result{}, fmt.Errorf("%w (tools/call %s)", ErrClosed, t.remote)
	}
	args := bytes.TrimSpace(call.Arguments)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = []byte("{}")
	}
	if t.schema != nil {
		if err := t.schema.Validate(args); err != nil {
			return tool.InvalidArguments("%s", err.Error()), nil
		}
	} else if !json.Valid(args) || args[0] != '{' {
		return tool.InvalidArguments("invalid arguments: want a JSON object"), nil
	}
	if c.tasks.requires(t.remote) {
		return t.callAsTask(ctx, json.RawMessage(args))
	}
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	res, err := c.session.CallTool(rctx, &sdk.CallToolParams{Name: t.remote, Arguments: json.RawMessage(args)})
	if err != nil {
		var werr *jsonrpcError
		if errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams && ctx.Err() == nil {
			return tool.Errorf("MCP server %s refused the call to %s: %s", c.label, t.remote, werr.Message), nil
		}
		return tool.Result{}, c.serverError(ctx, rctx, "tools/call", t.remote, err)
	}
	out, err := fromMCP(res, t.remote)
	if err != nil {
		return tool.Result{}, &ServerError{Server: c.label, Method: "tools/call", Tool: t.remote, Err: err}
	}
	return out, nil
}

// newRemoteTool mounts one of the server's tools under name.
func (c *Client) newRemoteTool(name string, st *sdk.Tool) (*remoteTool, error) {
	spec := llm.ToolSpec{Name: name, Description: st.Description}
	if spec.Description == "" {
		spec.Description = "MCP tool " + st.Name
	}
	var err error
	spec.InputSchema = json.RawMessage(`{"type":"object"}`)
	if st.InputSchema != nil {
		if spec.InputSchema, err = json.Marshal(st.InputSchema); err != nil {
			return nil, fmt.Errorf("input schema: %w", err)
		}
	}
	if st.OutputSchema != nil {
		if spec.OutputSchema, err = json.Marshal(st.OutputSchema); err != nil {
			return nil, fmt.Errorf("output schema: %w", err)
		}
	}
	t := &remoteTool{c: c, spec: spec, remote: st.Name, flags: c.flagsFor(st.Annotations)}
	// Arguments are checked here before anything is sent; a schema this
	// validator cannot read (another draft's constructs) is left to the
	// server, which validates anyway.
	if s, err := tool.CompileSchema(spec.InputSchema); err == nil {
		t.schema = s
	}
	t.sig, _ = json.Marshal(struct {
		S llm.ToolSpec
		F tool.Flags
		R string
	}{spec, t.flags, st.Name})
	return t, nil
}

// flagsFor derives a tool's flags from the client's options and, for a
// trusted server only, from the tool's annotations. A server's word never
// outweighs the host's: a tool the host says can send data out (Egress)
// has effects, so it is not idempotent whatever the server claims.
func (c *Client) flagsFor(a *sdk.ToolAnnotations) tool.Flags {
	f := tool.Flags{
		Untrusted:   !c.opts.Trusted,
		Egress:      c.opts.Egress,
		Permissions: append([]string{"mcp"}, c.opts.Permissions...),
	}
	if c.opts.Trusted && a != nil {
		f.Untrusted = a.OpenWorldHint != nil && *a.OpenWorldHint
		f.Idempotent = (a.IdempotentHint || a.ReadOnlyHint) && !c.opts.Egress
	}
	return f
}

// toolSet is the client's mounted tools after one refresh.
type toolSet struct {
	tools  []*remoteTool
	byName map[string]*remoteTool
	err    error // tools left out
}

// Refresh lists the server's tools now and swaps in the new set: new tools
// are mounted, gone ones unmounted, changed ones replaced; a tool whose
// description, schema and flags did not change keeps its value. When the
// listing fails, the error says why and the current set stays. The client
// refreshes by itself when the server notifies that its tools changed.
func (c *Client) Refresh(ctx context.Context) (Change, error) {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()
	if c.closed.Load() {
		return Change{}, ErrClosed
	}
	rctx, cancel := c.requestContext(ctx)
	defer cancel()
	var listed []*sdk.Tool
	for st, err := range c.session.Tools(rctx, nil) {
		if err != nil {
			return Change{}, c.serverError(ctx, rctx, "tools/list", "", err)
		}
		listed = append(listed, st)
	}
	if err := c.tasks.settle(rctx); err != nil {
		return Change{}, c.serverError(ctx, rctx, "tools/list", "", err)
	}
	old := c.set.Load()
	next := c.mount(old, listed)
	ch := diff(old, next)
	c.set.Store(next)
	ch.Err = errors.Join(next.err, c.syncPublications(next))
	if !ch.Empty() && c.opts.OnChange != nil {
		c.opts.OnChange(ch)
	}
	return ch, nil
}

// mount builds the tool set for the listed tools, reusing the tools of old
// that did not change.
func (c *Client) mount(old *toolSet, listed []*sdk.Tool) *toolSet {
	next := &toolSet{byName: map[string]*remoteTool{}}
	claims := map[string][]string{} // exposed name -> server names
	var order []string
	for _, st := range listed {
		if len(c.opts.Include) > 0 && !slices.Contains(c.opts.Include, st.Name) {
			continue
		}
		if slices.Contains(c.opts.Exclude, st.Name) {
			continue
		}
		name := exposedName(c.opts.Prefix, st.Name)
		if _, seen := claims[name]; !seen {
			order = append(order, name)
		}
		claims[name] = append(claims[name], st.Name)
	}
	byRemote := map[string]*sdk.Tool{}
	for _, st := range listed {
		byRemote[st.Name] = st
	}
	var errs []error
	for _, name := range order {
		if remotes := claims[name]; len(remotes) > 1 {
			errs = append(errs, fmt.Errorf("mcp: server %s: tools %q all map to the name %q: none of them is mounted (use Include or Exclude to keep one)", c.label, remotes, name))
			continue
		}
		t, err := c.newRemoteTool(name, byRemote[claims[name][0]])
		if err != nil {
			errs = append(errs, fmt.Errorf("mcp: server %s: tool %q: %w", c.label, claims[name][0], err))
			continue
		}
		if prev, ok := old.byName[name]; ok && bytes.Equal(prev.sig, t.sig) {
			t = prev
		}
		next.tools = append(next.tools, t)
		next.byName[name] = t
	}
	next.err = errors.Join(errs...)
	return next
}

func diff(old, next *toolSet) Change {
	var ch Change
	for _, t := range next.tools {
		prev, ok := old.byName[t.spec.Name]
		switch {
		case !ok:
			ch.Added = append(ch.Added, t.spec.Name)
		case prev != t:
			ch.Replaced = append(ch.Replaced, t.spec.Name)
		}
	}
	for _, t := range old.tools {
		if _, ok := next.byName[t.spec.Name]; !ok {
			ch.Removed = append(ch.Removed, t.spec.Name)
		}
	}
	return ch
}
