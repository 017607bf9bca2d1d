package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/autoagent-go/autoagent/internal/backend"
)

// Defaults for the zero values of [Config].
const (
	DefaultStartTimeout    = 10 * time.Second
	DefaultMinBackoff      = 100 * time.Millisecond
	DefaultMaxBackoff      = 10 * time.Second
	DefaultPingTimeout     = 2 * time.Second
	DefaultGracefulTimeout = 3 * time.Second
)

// Config says which process to run and how to supervise it.
type Config struct {
	// Kind and Name identify the backend in errors.
	Kind backend.Kind
	Name string
	// Path is the backend binary; Args its arguments.
	Path string
	Args []string
	// Env holds "KEY=VALUE" entries added to the child's environment.
	Env []string
	// InheritEnv passes the host's whole environment to the child. Without
	// it the child sees only the variables of [baseEnv] and Env.
	InheritEnv bool
	// Plugins is the go-plugin version map; Dispense names the plugin to
	// dispense from it.
	Plugins  map[int]plugin.PluginSet
	Dispense string
	// StartTimeout bounds the start and handshake of a process.
	StartTimeout time.Duration
	// MinBackoff and MaxBackoff bound the delay before a start that follows
	// a failure; the delay doubles with each consecutive failure.
	MinBackoff, MaxBackoff time.Duration
	// PingTimeout bounds the health check of a process whose last call
	// ended with its context.
	PingTimeout time.Duration
	// GracefulTimeout bounds a graceful stop before the process is killed.
	GracefulTimeout time.Duration
	// Stderr receives a copy of the child's standard error.
	Stderr io.Writer
	// DialOptions are added to go-plugin's gRPC dial options.
	DialOptions []grpc.DialOption
}

// Supervisor runs and restarts one backend process. Its methods are safe
// for concurrent use.
type Supervisor[T any] struct {
	cfg     Config
	closing chan struct{}
	wg      sync.WaitGroup // bring-ups in progress

	mu       sync.Mutex
	cur      *Instance[T]
	up       *attempt[T] // bring-up in progress, or nil
	failures int         // consecutive failed starts and crashes
	retryAt  time.Time   // no start before this
	closed   bool
}

// attempt is one bring-up: its waiters read inst or err once done closes.
type attempt[T any] struct {
	done chan struct{}
	inst *Instance[T]
	err  error
}

// Instance is one running backend process.
type Instance[T any] struct {
	// Stub is what the dispensed plugin's client constructor returned.
	Stub T
	// Version is the protocol version negotiated at the handshake.
	Version int

	client  *plugin.Client
	cmd     *exec.Cmd
	conn    *grpc.ClientConn
	stderr  *tail
	suspect atomic.Bool // a call ended with its context; check before reuse

	once  sync.Once
	gone  chan struct{} // closed when the process is reaped
	cause error         // why it was retired; read after gone closes
}

// New returns a supervisor for cfg. No process starts until the first
// [Supervisor.Acquire].
func New[T any](cfg Config) *Supervisor[T] {
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	cfg.MaxBackoff = max(cfg.MaxBackoff, cfg.MinBackoff)
	if cfg.PingTimeout <= 0 {
		cfg.PingTimeout = DefaultPingTimeout
	}
	if cfg.GracefulTimeout <= 0 {
		cfg.GracefulTimeout = DefaultGracefulTimeout
	}
	return &Supervisor[T]{cfg: cfg, closing: make(chan struct{})}
}

// wrap returns err as an [Error] naming this backend.
func (s *Supervisor[T]) wrap(err error) error {
	return &Error{Kind: s.cfg.Kind, Backend: s.cfg.Name, Err: err}
}

// Acquire returns the live instance, starting one if there is none (after
// the backoff that follows a failure) and health-checking one whose last
// call ended with its context. Waiting is bounded by ctx. The start itself
// belongs to the supervisor: when ctx ends first, the start goes on and
// its process serves the next call.
func (s *Supervisor[T]) Acquire(ctx context.Context) (*Instance[T], error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, s.wrap(ErrClosed)
	}
	if inst := s.cur; inst != nil && !inst.suspect.Load() {
		s.mu.Unlock()
		return inst, nil
	}
	a := s.up
	if a == nil {
		a = &attempt[T]{done: make(chan struct{})}
		s.up = a
		s.wg.Add(1)
		go s.bringUp(a)
	}
	s.mu.Unlock()
	select {
	case <-a.done:
		return a.inst, a.err
	case <-ctx.Done():
		return nil, s.wrap(fmt.Errorf("waiting for the backend to start: %w", ctx.Err()))
	}
}

// bringUp makes a usable instance current, or records why it could not.
func (s *Supervisor[T]) bringUp(a *attempt[T]) {
	defer s.wg.Done()
	a.inst, a.err = s.bring()
	s.mu.Lock()
	if a.inst != nil {
		s.cur = a.inst
	}
	s.up = nil
	s.mu.Unlock()
	close(a.done)
}

func (s *Supervisor[T]) bring() (*Instance[T], error) {
	s.mu.Lock()
	old := s.cur
	s.mu.Unlock()
	if old != nil {
		if err := s.ping(old); err == nil {
			old.suspect.Store(false)
			return old, nil
		}
		s.retire(old, ErrUnresponsive, false)
	}
	s.mu.Lock()
	wait := time.Until(s.retryAt)
	s.mu.Unlock()
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-s.closing:
			t.Stop()
			return nil, s.wrap(ErrClosed)
		}
	}
	inst, err := s.start()
	s.mu.Lock()
	closed := s.closed
	if err != nil {
		s.failures++
		s.retryAt = time.Now().Add(backoff(s.failures, s.cfg.MinBackoff, s.cfg.MaxBackoff))
	}
	s.mu.Unlock()
	switch {
	case closed:
		// Close may have cut the start short; either way it is why.
		if inst != nil {
			s.retire(inst, ErrClosed, false)
		}
		return nil, s.wrap(ErrClosed)
	case err != nil:
		return nil, s.wrap(err)
	}
	return inst, nil
}

// start runs a new process and completes the handshake. Close kills a
// process still starting: go-plugin would wait for its handshake until
// StartTimeout, and Close with it.
func (s *Supervisor[T]) start() (*Instance[T], error) {
	ctx, abort := context.WithCancel(context.Background())
	started := make(chan struct{})
	defer close(started)
	go func() {
		select {
		case <-s.closing:
			abort()
		case <-started:
		}
	}()
	cmd := exec.CommandContext(ctx, s.cfg.Path, s.cfg.Args...)
	cmd.Env = childEnv(s.cfg.InheritEnv, s.cfg.Env)
	dieWithParent(cmd)
	t := &tail{}
	var stderr io.Writer = t
	if s.cfg.Stderr != nil {
		stderr = io.MultiWriter(t, s.cfg.Stderr)
	}
	client := plugin.NewClient(&plugin.ClientConfig{
		HandshakeConfig:  backend.Handshake,
		VersionedPlugins: s.cfg.Plugins,
		Cmd:              cmd,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		SkipHostEnv:      true, // childEnv already decided what the child sees
		StartTimeout:     s.cfg.StartTimeout,
		Stderr:           stderr,
		Logger:           hclog.NewNullLogger(),
		GRPCDialOptions:  append(backend.DialOptions(), s.cfg.DialOptions...),
	})
	inst := &Instance[T]{client: client, cmd: cmd, stderr: t, gone: make(chan struct{})}
	fail := func(err error) (*Instance[T], error) {
		client.Kill() // reaps the process and drains its stderr
		if ps := cmd.ProcessState; ps != nil && ps.Exited() && t.String() != "" {
			// It ended by itself: its own words say why, better than
			// go-plugin's guesses about architectures and permissions.
			return nil, fmt.Errorf("%w: %s ended (%s) before the handshake%s", ErrStart, s.cfg.Path, ps, stderrNote(t))
		}
		msg, _, _ := strings.Cut(err.Error(), "\n")
		return nil, fmt.Errorf("%w: %s: %s%s", ErrStart, s.cfg.Path, msg, stderrNote(t))
	}
	rpc, err := client.Client()
	if err != nil {
		return fail(err)
	}
	gc, ok := rpc.(*plugin.GRPCClient)
	if !ok {
		return fail(errors.New("backend did not speak gRPC"))
	}
	raw, err := rpc.Dispense(s.cfg.Dispense)
	if err != nil {
		return fail(fmt.Errorf("backend serves no %s: %w", s.cfg.Dispense, err))
	}
	stub, ok := raw.(T)
	if !ok {
		return fail(fmt.Errorf("dispensed %T", raw))
	}
	inst.Stub, inst.Version, inst.conn = stub, client.NegotiatedVersion(), gc.Conn
	return inst, nil
}

// ping checks that inst still answers go-plugin's health service.
func (s *Supervisor[T]) ping(inst *Instance[T]) error {
	if inst.client.Exited() {
		return ErrCrashed
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.PingTimeout)
	defer cancel()
	_, err := grpc_health_v1.NewHealthClient(inst.conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
	return err
}

// Call runs one call with the live instance's stub (acquired as by
// [Supervisor.Acquire]). fn's error is a transport error and becomes the
// call's error as by [Supervisor.Fail]; a nil error resets the backoff.
func (s *Supervisor[T]) Call(ctx context.Context, fn func(stub T) error) error {
	inst, err := s.Acquire(ctx)
	if err != nil {
		return err
	}
	if err := fn(inst.Stub); err != nil {
		return s.Fail(ctx, inst, err)
	}
	s.Succeeded()
	return nil
}

// Succeeded records that a call on inst worked, which resets the backoff.
func (s *Supervisor[T]) Succeeded() {
	s.mu.Lock()
	s.failures = 0
	s.mu.Unlock()
}

// Fail turns the transport error of a call on inst into the call's error.
// Errors the backend's implementation returned travel in-band and never
// come here. When ctx ended, the call is abandoned and the instance is
// health-checked before its next use. When the process is gone or the
// connection broke, the instance is killed, reaped and replaced for the
// next call. Any other gRPC failure is a protocol error; the instance is
// kept.
func (s *Supervisor[T]) Fail(ctx context.Context, inst *Instance[T], err error) error {
	if ctx.Err() != nil {
		inst.suspect.Store(true)
		return s.wrap(ctx.Err())
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return s.wrap(ErrClosed)
	}
	code := status.Code(err)
	if code == codes.Unavailable || code == codes.Canceled || inst.client.Exited() || s.ping(inst) != nil {
		s.retire(inst, ErrCrashed, false)
		return s.wrap(inst.cause)
	}
	return s.wrap(fmt.Errorf("%w: %v", ErrProtocol, err))
}

// retire stops inst once, reaps it and records why. A graceful stop asks
// the process to exit and kills it after GracefulTimeout; otherwise it is
// killed at once and counts as a failure for the backoff.
func (s *Supervisor[T]) retire(inst *Instance[T], why error, graceful bool) {
	inst.once.Do(func() {
		s.mu.Lock()
		if s.cur == inst {
			s.cur = nil
		}
		if !graceful {
			s.failures++
			s.retryAt = time.Now().Add(backoff(s.failures, s.cfg.MinBackoff, s.cfg.MaxBackoff))
		}
		s.mu.Unlock()
		if !graceful {
			_ = inst.cmd.Process.Kill()
		}
		done := make(chan struct{})
		go func() {
			inst.client.Kill() // returns once the process is reaped
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(s.cfg.GracefulTimeout):
			_ = inst.cmd.Process.Kill()
			<-done
		}
		state := "exited"
		if ps := inst.cmd.ProcessState; ps != nil {
			state = ps.String()
		}
		inst.cause = fmt.Errorf("%w (pid %d, %s)%s", why, inst.cmd.Process.Pid, state, stderrNote(inst.stderr))
		close(inst.gone)
	})
	<-inst.gone
}

// PID returns the process id of the live instance, or 0.
func (s *Supervisor[T]) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return 0
	}
	return s.cur.cmd.Process.Pid
}

// Version returns the protocol version negotiated with the live instance,
// or 0 when none runs.
func (s *Supervisor[T]) Version() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return 0
	}
	return s.cur.Version
}

// Close stops the live process gracefully (killing it when it does not
// exit within GracefulTimeout) and any process still starting, and waits
// until every process this supervisor started is reaped. Calls in flight
// fail with an error wrapping [ErrClosed]. Close is idempotent.
func (s *Supervisor[T]) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.closing)
	s.mu.Unlock()
	s.wg.Wait()
	s.mu.Lock()
	cur := s.cur
	s.mu.Unlock()
	if cur != nil {
		s.retire(cur, ErrClosed, true)
	}
	return nil
}

// stderrNote formats the end of a backend's stderr for an error message.
func stderrNote(t *tail) string {
	if s := t.String(); s != "" {
		return "; backend stderr ends: " + s
	}
	return ""
}

// childEnv returns the child's environment: the host's when inherit is
// set, else only the variables a program needs to run (baseEnv), then
// extra.
func childEnv(inherit bool, extra []string) []string {
	var env []string
	if inherit {
		env = os.Environ()
	} else {
		for _, k := range baseEnv {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	return append(env, extra...)
}

// baseEnv lists the host variables a backend gets without InheritEnv:
// where to find programs, home and temporary directories, locale and time
// zone, TLS roots and proxies. Nothing that usually holds a secret.
var baseEnv = []string{
	"PATH", "HOME", "USER", "TMPDIR", "TMP", "TEMP", "LANG", "LC_ALL", "LC_CTYPE", "TZ",
	"SYSTEMROOT", "SSL_CERT_FILE", "SSL_CERT_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
}
