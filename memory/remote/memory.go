package remote

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"google.golang.org/grpc"

	"github.com/autoagent-go/autoagent/internal/backend"
	"github.com/autoagent-go/autoagent/internal/backend/supervisor"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
)

// Options says which backend to run and how. The zero value of every
// field but Name (or Path) works.
type Options struct {
	// Name is the backend's name: the binary autoagent-memory-NAME in Dir.
	// Required unless Path is set.
	Name string
	// Dir is the backends directory searched for Name. Empty means
	// $AUTOAGENT_BACKENDS, or ./backends when that is unset.
	Dir string
	// Path runs this binary instead of searching Dir; Name then only
	// labels the backend in errors (by default it is taken from the file
	// name).
	Path string
	// Args are the backend's command-line arguments (for
	// autoagent-memory-sqlite: --db, --identity, ...).
	Args []string
	// Env holds "KEY=VALUE" entries added to the backend's environment.
	Env []string
	// InheritEnv gives the backend the host's whole environment. By default
	// it sees only PATH, HOME, the temporary directory, locale, time zone,
	// TLS roots and proxy settings, plus Env.
	InheritEnv bool
	// StartTimeout bounds the start and handshake of the process
	// (default 10s).
	StartTimeout time.Duration
	// MinRestartBackoff and MaxRestartBackoff bound the wait before a
	// process is restarted after a crash or a failed start; it doubles with
	// each consecutive failure and resets after a successful call
	// (defaults 100ms and 10s).
	MinRestartBackoff, MaxRestartBackoff time.Duration
	// HealthTimeout bounds the health check made before reusing a process
	// whose previous call ended with its context (default 2s).
	HealthTimeout time.Duration
	// Stderr receives a copy of the backend's standard error (default: not
	// copied). The last few KiB are kept regardless and quoted in the
	// error of a crash.
	Stderr io.Writer

	// dialOptions are extra gRPC dial options (tests).
	dialOptions []grpc.DialOption
}

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
func New(ctx context.Context, opts Options) (Memory, error) {
	path, name, err := backend.Resolve(backend.KindMemory, opts.Name, opts.Dir, opts.Path)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	sup := supervisor.New[*stub](supervisor.Config{
		Kind: backend.KindMemory, Name: name, Path: path, Args: opts.Args,
		Env: opts.Env, InheritEnv: opts.InheritEnv,
		Plugins: versions(nil), Dispense: backend.PluginName(backend.KindMemory),
		StartTimeout: opts.StartTimeout, MinBackoff: opts.MinRestartBackoff, MaxBackoff: opts.MaxRestartBackoff,
		PingTimeout: opts.HealthTimeout, Stderr: opts.Stderr, DialOptions: opts.dialOptions,
	})
	c := &client{name: name, sup: sup}
	var info infoResponse
	if err := c.do(ctx, "Info", &infoRequest{}, &info); err != nil {
		sup.Close()
		return nil, err
	}
	c.served = info.Name
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
	if err := c.do(ctx, "Compact", &compactRequest{Messages: msgs}, &out); err != nil {
		return nil, nil, err
	}
	if out.Error != nil {
		return nil, out.Usage, errorCodec.Decode(out.Error)
	}
	if out.Messages == nil {
		out.Messages = []llm.Message{}
	}
	return out.Messages, out.Usage, nil
}

// Recall implements memory.Memory.
func (c *client) Recall(ctx context.Context, query string, k int) ([]llm.Message, error) {
	var out recallResponse
	if err := c.do(ctx, "Recall", &recallRequest{Query: query, K: k}, &out); err != nil {
		return nil, err
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
	if err := p.rc.do(ctx, "Remember", &rememberRequest{Text: text, Subject: subject, Source: source}, &out); err != nil {
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
