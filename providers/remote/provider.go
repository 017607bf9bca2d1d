package remote

import (
	"context"
	"fmt"
	"io"
	"iter"
	"time"

	"google.golang.org/grpc"

	"github.com/autoagent-go/autoagent/internal/backend"
	"github.com/autoagent-go/autoagent/internal/backend/supervisor"
	"github.com/autoagent-go/autoagent/llm"
)

// Options says which backend to run and how. The zero value of every
// field but Name (or Path) works.
type Options struct {
	// Name is the backend's name: the binary autoagent-provider-NAME in
	// Dir. Required unless Path is set.
	Name string
	// Dir is the backends directory searched for Name. Empty means
	// $AUTOAGENT_BACKENDS, or ./backends when that is unset.
	Dir string
	// Path runs this binary instead of searching Dir; Name then only
	// labels the backend in errors (by default it is taken from the file
	// name).
	Path string
	// Args are the backend's command-line arguments (for
	// autoagent-provider-http: --provider, --model, --base-url).
	Args []string
	// Env holds "KEY=VALUE" entries added to the backend's environment.
	Env []string
	// InheritEnv gives the backend the host's whole environment. By default
	// it sees only PATH, HOME, the temporary directory, locale, time zone,
	// TLS roots and proxy settings, plus Env: a backend does not receive the
	// host's secrets by accident.
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
	// whose previous call ended with its context (default 2s). A process
	// that fails it is killed and replaced.
	HealthTimeout time.Duration
	// Stderr receives a copy of the backend's standard error (default: not
	// copied). The last few KiB are kept regardless and quoted in the
	// error of a crash.
	Stderr io.Writer

	// dialOptions are extra gRPC dial options (tests observe the wire
	// through them).
	dialOptions []grpc.DialOption
}

// Provider is an llm.Provider served by a backend subprocess. It is safe
// for concurrent use. Close it when done: it owns a child process.
type Provider struct {
	name string // the served provider's name, for llm.Name
	sup  *supervisor.Supervisor[*stub]
}

var _ llm.Provider = (*Provider)(nil)

// New starts the backend that opts names, completes the handshake and
// returns a Provider for it. A backend that cannot be found, started or
// handshaken is an error here rather than at the first call. The process
// runs until [Provider.Close].
func New(ctx context.Context, opts Options) (*Provider, error) {
	path, name, err := backend.Resolve(backend.KindProvider, opts.Name, opts.Dir, opts.Path)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	sup := supervisor.New[*stub](supervisor.Config{
		Kind: backend.KindProvider, Name: name, Path: path, Args: opts.Args,
		Env: opts.Env, InheritEnv: opts.InheritEnv,
		Plugins: versions(nil), Dispense: backend.PluginName(backend.KindProvider),
		StartTimeout: opts.StartTimeout, MinBackoff: opts.MinRestartBackoff, MaxBackoff: opts.MaxRestartBackoff,
		PingTimeout: opts.HealthTimeout, Stderr: opts.Stderr, DialOptions: opts.dialOptions,
	})
	p := &Provider{name: name, sup: sup}
	var info *infoResponse
	if err := sup.Call(ctx, func(st *stub) (err error) { info, err = st.info(ctx); return err }); err != nil {
		sup.Close()
		return nil, err
	}
	if info.Name != "" {
		p.name = info.Name
	}
	return p, nil
}

// Name returns the served provider's name as the backend reports it
// ("openai", ...), or the backend's name when it reports none.
func (p *Provider) Name() string { return p.name }

// Complete sends req to the backend. The backend's provider errors arrive
// as themselves (a *llm.ProviderError stays one); a crashed, unreachable
// or timed-out backend is a [*BackendError]. Cancelling ctx cancels the
// backend's work.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	var out *completeResponse
	if err := p.sup.Call(ctx, func(st *stub) (err error) { out, err = st.complete(ctx, req); return err }); err != nil {
		return nil, err
	}
	if out.Error != nil {
		return nil, errorCodec.Decode(out.Error)
	}
	if out.Response == nil {
		return nil, &BackendError{Kind: backend.KindProvider, Backend: p.name, Err: fmt.Errorf("%w: empty response", ErrBackendProtocol)}
	}
	return out.Response, nil
}

// Stream sends req to the backend and yields its events as they arrive
// (a server-streaming call). Stopping the iteration or cancelling ctx
// cancels the backend's stream. Errors are as for Complete; a stream that
// ends without its done event is an error wrapping llm.ErrIncompleteStream.
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		inst, err := p.sup.Acquire(ctx)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		answered := false
		for ev, err := range inst.Stub.stream(ctx, req) {
			if err != nil {
				yield(llm.StreamEvent{}, p.sup.Fail(ctx, inst, err))
				return
			}
			if !answered {
				answered = true
				p.sup.Succeeded()
			}
			if ev.Error != nil {
				yield(llm.StreamEvent{}, errorCodec.Decode(ev.Error))
				return
			}
			if !yield(llm.StreamEvent{Type: ev.Type, Text: ev.Text, ToolCall: ev.ToolCall, Response: ev.Response}, nil) {
				return
			}
			if ev.Type == llm.StreamDone {
				return
			}
		}
		yield(llm.StreamEvent{}, &BackendError{Kind: backend.KindProvider, Backend: p.name,
			Err: fmt.Errorf("%w: %w", ErrBackendProtocol, llm.ErrIncompleteStream)})
	}
}

// ProtocolVersion returns the protocol version negotiated with the running
// backend process at its handshake, or 0 while none runs.
func (p *Provider) ProtocolVersion() int { return p.sup.Version() }

// Close stops the backend process (gracefully, then by force after a few
// seconds) and waits until it is reaped. Calls in flight fail with
// [ErrClosed]. Close is idempotent; the Provider is unusable afterwards.
func (p *Provider) Close() error { return p.sup.Close() }

// pid returns the live backend's process id, or 0 (tests).
func (p *Provider) pid() int { return p.sup.PID() }
