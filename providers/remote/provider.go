package remote

import (
	"context"
	"fmt"
	"iter"

	"google.golang.org/grpc"

	"github.com/autoagent-go/autoagent/internal/backend"
	"github.com/autoagent-go/autoagent/internal/backend/supervisor"
	"github.com/autoagent-go/autoagent/llm"
)

// Options says which backend to run and how. The zero value of every
// field but Name (or Path) works. It is the one Options type of both
// backend kinds (memory/remote.Options is the same type): Name, Dir or
// Path find the binary (autoagent-provider-NAME in Dir, $AUTOAGENT_BACKENDS or
// ./backends); Args and Env are its command line and the variables added
// to its environment, which holds only a few safe variables unless
// InheritEnv; StartTimeout, MinRestartBackoff, MaxRestartBackoff and
// HealthTimeout bound its start, its restarts and its health checks
// (defaults 10s, 100ms, 10s, 2s); Stderr receives a copy of its standard
// error.
type Options = supervisor.Options

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
func New(ctx context.Context, opts Options) (*Provider, error) { return newDial(ctx, opts, nil) }

// newDial is New with extra gRPC dial options (tests observe the wire
// through them).
func newDial(ctx context.Context, opts Options, dial []grpc.DialOption) (*Provider, error) {
	cfg, name, err := opts.Config(backend.KindProvider, versions(nil), dial)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	sup := supervisor.New[*stub](cfg)
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
