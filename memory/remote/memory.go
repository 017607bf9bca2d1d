package remote

import (
	"context"
	"fmt"
	"slices"

	"google.golang.org/grpc"

	"github.com/autoagent-go/autoagent/internal/backend"
	"github.com/autoagent-go/autoagent/internal/backend/supervisor"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
)

// Options says which backend to run and how. The zero value of every
// field but Name (or Path) works. It is the one Options type of both
// backend kinds (providers/remote.Options is the same type): Name, Dir or
// Path find the binary (autoagent-memory-NAME in Dir, $AUTOAGENT_BACKENDS or
// ./backends); Args and Env are its command line and the variables added
// to its environment, which holds only a few safe variables unless
// InheritEnv; StartTimeout, MinRestartBackoff, MaxRestartBackoff and
// HealthTimeout bound its start, its restarts and its health checks
// (defaults 10s, 100ms, 10s, 2s); Stderr receives a copy of its standard
// error.
type Options = supervisor.Options

// Memory is a memory.Memory served by a backend subprocess. The value New
// returns also implements exactly those of memory.Rememberer,
// memory.Forgetter and memory.Flusher that the served memory implements,
// so type assertions (and the agent loop's recall and remember tools) work
// as they would in process. It is safe for concurrent use.
type Memory interface {
	memory.Memory
	// Backend returns the backend's name.
	Backend() string
	// Served describes the memory the backend serves, as it reports it.
	Served() string
	// ProtocolVersion returns the protocol version negotiated with the
	// running backend process at its handshake, or 0 while none runs.
	ProtocolVersion() int
	// Close stops the backend process (gracefully, then by force after a
	// few seconds) and waits until it is reaped. Calls in flight fail with
	// [ErrClosed]. A backend that works in the background should be
	// flushed first. Close is idempotent.
	Close() error
}

// New starts the backend that opts names, completes the handshake, asks
// which optional interfaces the served memory implements and returns a
// Memory for it. A backend that cannot be found, started or handshaken is
// an error here rather than at the first call. The process runs until
// Close.
func New(ctx context.Context, opts Options) (Memory, error) { return newDial(ctx, opts, nil) }

// newDial is New with extra gRPC dial options (tests observe the wire
// through them).
func newDial(ctx context.Context, opts Options, dial []grpc.DialOption) (Memory, error) {
	cfg, name, err := opts.Config(backend.KindMemory, versions(nil), dial)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	sup := supervisor.New[*stub](cfg)
	c := &client{name: name, sup: sup}
	var info infoResponse
	if err := c.do(ctx, "Info", &infoRequest{}, &info); err != nil {
		sup.Close()
		return nil, err
	}
	c.served = info.Name
	c.keepsTaint = slices.Contains(info.Interfaces, ifaceTaint)
	r := slices.Contains(info.Interfaces, ifaceRememberer)
	f := slices.Contains(info.Interfaces, ifaceForgetter)
	l := slices.Contains(info.Interfaces, ifaceFlusher)
	rp, fp, lp := rememberPart{c}, forgetPart{c}, flushPart{c}
	switch {
	case r && f && l:
		return withRFL{c, rp, fp, lp}, nil
	case r && f:
		return withRF{c, rp, fp}, nil
	case r && l:
		return withRL{c, rp, lp}, nil
	case f && l:
		return withFL{c, fp, lp}, nil
	case r:
		return withR{c, rp}, nil
	case f:
		return withF{c, fp}, nil
	case l:
		return withL{c, lp}, nil
	}
	return plain{c}, nil
}

// client implements the methods every served memory has.
type client struct {
	name   string
	served string
	sup    *supervisor.Supervisor[*stub]
	// keepsTaint: the backend said it carries a run's taint to its
	// memory. One that did not (an older build) cannot say which of its
	// contents are untrusted, so what it recalls is framed untrusted, and
	// so is what it compacts of a tainted run.
	keepsTaint bool
}

// do makes one call, turning transport failures into [BackendError]s.
func (c *client) do(ctx context.Context, method string, in, out any) error {
	return c.sup.Call(ctx, func(st *stub) error { return st.call(ctx, method, in, out) })
}

func (c *client) Backend() string { return c.name }

func (c *client) Served() string { return c.served }

func (c *client) ProtocolVersion() int { return c.sup.Version() }

func (c *client) Close() error { return c.sup.Close() }

// Compact implements memory.Memory. The memory's own errors (such as
// memory.ErrSummaryFailed) arrive as themselves, with the usage it
// reported; a backend failure is a [*BackendError].
func (c *client) Compact(ctx context.Context, msgs []llm.Message) ([]llm.Message, *llm.Usage, error) {
	var out compactResponse
	if err := c.do(ctx, "Compact", &compactRequest{Messages: msgs, Tainted: memory.TaintedContext(ctx)}, &out); err != nil {
		return nil, nil, err
	}
	if out.Error != nil {
		return nil, out.Usage, errorCodec.Decode(out.Error)
	}
	if out.Messages == nil {
		out.Messages = []llm.Message{}
	}
	if !c.keepsTaint && memory.TaintedContext(ctx) {
		frameNew(out.Messages, msgs)
	}
	return out.Messages, out.Usage, nil
}

// frameNew frames the messages of out that are not messages of in: what
// the memory wrote (a summary), not the transcript it kept.
func frameNew(out, in []llm.Message) {
	kept := make(map[string]bool, len(in))
	for _, m := range in {
		kept[string(m.Role)+"\x00"+m.Text()] = true
	}
	for i, m := range out {
		if !kept[string(m.Role)+"\x00"+m.Text()] {
			out[i] = memory.FrameMessage(m)
		}
	}
}

// frameAll frames every message of msgs as untrusted (memory.FrameMessage).
func frameAll(msgs []llm.Message) {
	for i := range msgs {
		msgs[i] = memory.FrameMessage(msgs[i])
	}
}

// Recall implements memory.Memory.
func (c *client) Recall(ctx context.Context, query string, k int) ([]llm.Message, error) {
	var out recallResponse
	if err := c.do(ctx, "Recall", &recallRequest{Query: query, K: k}, &out); err != nil {
		return nil, err
	}
	if !c.keepsTaint {
		frameAll(out.Messages)
	}
	return out.Messages, errorCodec.Decode(out.Error)
}

// pid returns the live backend's process id, or 0 (tests).
func (c *client) pid() int { return c.sup.PID() }

// rememberPart adds memory.Rememberer.
type rememberPart struct{ rc *client }

// Remember implements memory.Rememberer in the backend.
func (p rememberPart) Remember(ctx context.Context, text, subject string, source memory.Source) (memory.Record, error) {
	var out rememberResponse
	if err := p.rc.do(ctx, "Remember", &rememberRequest{Text: text, Subject: subject, Source: source, Tainted: memory.TaintedContext(ctx)}, &out); err != nil {
		return memory.Record{}, err
	}
	return out.Record, errorCodec.Decode(out.Error)
}

// forgetPart adds memory.Forgetter.
type forgetPart struct{ fc *client }

// Forget implements memory.Forgetter in the backend.
func (p forgetPart) Forget(ctx context.Context, id int64) (bool, error) {
	var out forgetResponse
	if err := p.fc.do(ctx, "Forget", &forgetRequest{ID: id}, &out); err != nil {
		return false, err
	}
	return out.Found, errorCodec.Decode(out.Error)
}

// ForgetMatching implements memory.Forgetter in the backend.
func (p forgetPart) ForgetMatching(ctx context.Context, instruction string, dryRun bool) ([]memory.Record, error) {
	var out forgetMatchingResponse
	if err := p.fc.do(ctx, "ForgetMatching", &forgetMatchingRequest{Instruction: instruction, DryRun: dryRun}, &out); err != nil {
		return nil, err
	}
	return out.Records, errorCodec.Decode(out.Error)
}

// flushPart adds memory.Flusher.
type flushPart struct{ lc *client }

// Flush implements memory.Flusher in the backend.
func (p flushPart) Flush(ctx context.Context) error {
	var out flushResponse
	if err := p.lc.do(ctx, "Flush", &flushRequest{}, &out); err != nil {
		return err
	}
	return errorCodec.Decode(out.Error)
}

// The combinations of optional interfaces a served memory can have; New
// returns the one that matches, so a type assertion on the result tells
// the truth.
type (
	plain struct{ *client }
	withR struct {
		*client
		rememberPart
	}
	withF struct {
		*client
		forgetPart
	}
	withL struct {
		*client
		flushPart
	}
	withRF struct {
		*client
		rememberPart
		forgetPart
	}
	withRL struct {
		*client
		rememberPart
		flushPart
	}
	withFL struct {
		*client
		forgetPart
		flushPart
	}
	withRFL struct {
		*client
		rememberPart
		forgetPart
		flushPart
	}
)
