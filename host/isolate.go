package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/autoagent-go/autoagent/tool"
)

// Code no person approved (Host.Inspect, which runs a module's describe so
// a person can review it, and modules loaded with Module.Isolated, such as
// a plugins directory's quarantined ones) runs by default in a sandbox
// process: a child of this one, with resource limits, that the host kills
// when it does not answer in time. Whatever such code does to the runtime,
// even a guest the instrumentation failed to interrupt, which would hold
// up this process's garbage collections for good, it does to a process
// the host then replaces (see RATIONALE.md "What stops a guest the
// instrumentation missed?"). Approved code runs in this process, where a
// call costs microseconds.
//
// The sandbox process is this program itself, re-executed with
// workerEnv set: the host package's init serves it before main runs, so
// every program that imports host can be its own sandbox.

// Isolation chooses where code no person approved runs. The zero value
// runs it in a sandbox process that re-executes this program.
type Isolation struct {
	// InProcess runs it in this process instead, as approved code runs.
	InProcess bool
	// Command starts the sandbox process instead of re-executing this
	// program: a program that calls host.ServeSandbox (or imports host,
	// whose init does when workerEnv is set).
	Command []string
	// Memory caps the sandbox process's address space (RLIMIT_AS, where
	// the system has it); 0 means 16 GiB. Guest memories are reserved at
	// their limit, so it bounds how many instances the process can hold.
	Memory int64
}

// workerEnv, set in a process's environment, makes it a sandbox process.
const workerEnv = "AUTOAGENT_HOST_SANDBOX"

func init() {
	if os.Getenv(workerEnv) == "" {
		return
	}
	os.Exit(ServeSandbox(os.Stdin, os.Stdout))
}

// sandboxSlack is how long past a request's own time limits the host
// waits for a sandbox process before killing it.
const sandboxSlack = 5 * time.Second

func (h *Host) slack() time.Duration {
	if s := h.opts.sandboxSlack; s > 0 {
		return s
	}
	return sandboxSlack
}

// workerRequest is one request to a sandbox process, one JSON value each.
type workerRequest struct {
	Op string `json:"op"` // "init", "inspect", "load", "call"

	// init
	Limits         Limits        `json:"limits"`
	ModuleLimits   ModuleLimits  `json:"module_limits"`
	CompileTimeout time.Duration `json:"compile_timeout"`
	Deadlines      deadlineMode  `json:"deadlines"`
	// CacheDir is the host's compilation cache (Options.CacheDir, before
	// the deadline mode's subdirectory), "" for none on disk.
	CacheDir string `json:"cache_dir,omitempty"`

	// inspect, load
	Name    string `json:"name,omitempty"`
	Bytes   []byte `json:"bytes,omitempty"`
	Sidecar []byte `json:"sidecar,omitempty"`
	// load
	ModLimits Limits            `json:"mod_limits"`
	Config    map[string]string `json:"config,omitempty"`
	// call
	Tool string          `json:"tool,omitempty"`
	Call json.RawMessage `json:"call,omitempty"` // a tool.Call
}

type workerResponse struct {
	Err        *wireError   `json:"error,omitempty"`
	Inspection *Inspection  `json:"inspection,omitempty"`
	Desc       *Description `json:"desc,omitempty"`
	ABI        ABI          `json:"abi,omitempty"`
	SHA256     string       `json:"sha256,omitempty"`
	Limits     Limits       `json:"limits"`
	Result     *tool.Result `json:"result,omitempty"`
	Record     *CallRecord  `json:"record,omitempty"`
}

// wireError carries a host error across the process boundary with what
// errors.Is and errors.As need.
type wireError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Limit   string `json:"limit,omitempty"`
	Value   string `json:"value,omitempty"`
	Max     int64  `json:"max,omitempty"`
	Module  string `json:"module,omitempty"`
	Import  string `json:"import,omitempty"`
	Detail  string `json:"detail,omitempty"`
	// Unregistered and Exposed are ImportError's.
	Unregistered bool   `json:"unregistered,omitempty"`
	Exposed      string `json:"exposed,omitempty"`
}

func toWire(err error) *wireError {
	if err == nil {
		return nil
	}
	w := &wireError{Kind: "other", Message: err.Error()}
	var (
		ie  *ImportError
		le  *LimitError
		mle *ModuleLimitError
	)
	switch {
	case errors.As(err, &ie):
		w.Kind, w.Module, w.Import, w.Detail, w.Unregistered, w.Exposed = "import", ie.Module, ie.Import, ie.Detail, ie.Unregistered, ie.Exposed
	case errors.As(err, &mle):
		w.Kind, w.Limit, w.Max, w.Value = "modulelimit", mle.Limit, mle.Max, mle.What
	case errors.As(err, &le):
		w.Kind, w.Limit, w.Value = "limit", le.Limit, le.Value
	default:
		for kind, sentinel := range sentinels {
			if errors.Is(err, sentinel) {
				w.Kind = kind
			}
		}
	}
	return w
}

var sentinels = map[string]error{
	"malformed": ErrMalformed, "noabi": ErrNoABI, "describe": ErrDescribe, "unsafe": ErrUnsafe, "closed": ErrClosed,
}

// sandboxError is an error a sandbox process reported: its message as
// written there, wrapping the sentinel it wrapped.
type sandboxError struct {
	msg      string
	sentinel error
}

func (e *sandboxError) Error() string { return e.msg }
func (e *sandboxError) Unwrap() error { return e.sentinel }

func (w *wireError) err() error {
	switch w.Kind {
	case "import":
		return &ImportError{Module: w.Module, Import: w.Import, Detail: w.Detail, Unregistered: w.Unregistered, Exposed: w.Exposed}
	case "modulelimit":
		return &ModuleLimitError{Limit: w.Limit, Max: w.Max, What: w.Value}
	case "limit":
		return &LimitError{Limit: w.Limit, Value: w.Value}
	}
	return &sandboxError{msg: w.Message, sentinel: sentinels[w.Kind]}
}

// ServeSandbox serves a host's requests on r and w until r ends: it is
// the whole of a sandbox process, and returns its exit status. Programs
// that import host need not call it: the package's init does, in a
// process started with workerEnv set.
func ServeSandbox(r io.Reader, w io.Writer) int {
	_ = os.Unsetenv(workerEnv)
	limitSandbox()
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	out := bufio.NewWriter(w)
	enc := json.NewEncoder(out)
	send := func(resp workerResponse) bool {
		if enc.Encode(resp) != nil || out.Flush() != nil {
			return false
		}
		return true
	}
	ctx := context.Background()
	var (
		h       *Host
		l       *Loaded
		lastRec *CallRecord
	)
	defer func() {
		if h != nil {
			_ = h.Close(ctx)
		}
	}()
	for {
		var req workerRequest
		if err := dec.Decode(&req); err != nil {
			return 0 // the host closed the pipe (or died)
		}
		var resp workerResponse
		switch {
		case req.Op == "init" && h == nil:
			var err error
			h, err = New(ctx, Options{
				CacheDir: req.CacheDir, NoDiskCache: req.CacheDir == "",
				PoolSize: -1, Limits: req.Limits, ModuleLimits: req.ModuleLimits,
				CompileTimeout: req.CompileTimeout, deadlines: req.Deadlines,
				KVDir:     os.DevNull, // no kv: grant ever reaches a sandbox process
				Isolation: Isolation{InProcess: true},
				OnCall:    func(_ context.Context, c CallRecord) { lastRec = &c },
			})
			resp.Err = toWire(err)
		case h == nil:
			resp.Err = toWire(errors.New("host: sandbox: the first request must be init"))
		case req.Op == "inspect":
			ins, err := h.Inspect(ctx, req.Name, req.Bytes, req.Sidecar)
			resp.Inspection, resp.Err = ins, toWire(err)
		case req.Op == "load" && l == nil:
			var err error
			l, err = h.Load(ctx, Module{Name: req.Name, Bytes: req.Bytes, Sidecar: req.Sidecar, Limits: req.ModLimits, Config: req.Config})
			if err == nil {
				d := l.Describe()
				resp.Desc, resp.ABI, resp.SHA256, resp.Limits = &d, l.ABI(), l.SHA256(), l.Limits()
			}
			resp.Err = toWire(err)
		case req.Op == "call" && l != nil:
			var c tool.Call
			if err := json.Unmarshal(req.Call, &c); err != nil {
				resp.Err = toWire(err)
				break
			}
			tl, ok := l.Tool(req.Tool)
			if !ok {
				resp.Err = toWire(fmt.Errorf("host: sandbox: no tool %q", req.Tool))
				break
			}
			lastRec = nil
			res, err := tl.Call(ctx, c)
			resp.Result, resp.Record, resp.Err = &res, lastRec, toWire(err)
		default:
			resp.Err = toWire(fmt.Errorf("host: sandbox: unexpected request %q", req.Op))
		}
		if !send(resp) {
			return 1
		}
	}
}

// sandbox is one sandbox process, serving one request at a time.
type sandbox struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	enc    *json.Encoder
	dec    *json.Decoder
	stderr *tailBuffer
	done   chan struct{} // closed when the process has exited
	mu     sync.Mutex
	dead   error // why the process is gone, once it is
}

// isolated reports whether code no person approved runs in a sandbox
// process.
func (h *Host) isolated() bool { return !h.opts.Isolation.InProcess }

// startSandbox starts a sandbox process and initialises its host like h.
func (h *Host) startSandbox(ctx context.Context) (*sandbox, error) {
	argv := h.opts.Isolation.Command
	if len(argv) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("host: starting a sandbox process: %w (set Options.Isolation)", err)
		}
		argv = []string{exe}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return len(kv) > len(workerEnv) && kv[:len(workerEnv)+1] == workerEnv+"="
	}), workerEnv+"=1", fmt.Sprintf("%s=%d", sandboxMemoryEnv, h.sandboxMemory()), "GOMEMLIMIT=1GiB")
	sandboxProcAttr(cmd)
	s := &sandbox{cmd: cmd, stderr: &tailBuffer{max: 16 << 10}, done: make(chan struct{})}
	cmd.Stderr = s.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("host: starting a sandbox process (%s): %w (set Options.Isolation)", argv[0], err)
	}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	s.stdin, s.enc, s.dec = in, json.NewEncoder(in), json.NewDecoder(bufio.NewReaderSize(out, 1<<20))
	_, err = s.do(ctx, workerRequest{Op: "init", Limits: h.limits, ModuleLimits: h.opts.ModuleLimits,
		CompileTimeout: h.compileTimeout, Deadlines: h.opts.deadlines, CacheDir: h.cacheBase()}, 30*time.Second)
	if err != nil {
		s.kill(err)
		return nil, err
	}
	return s, nil
}

func (h *Host) sandboxMemory() int64 {
	if m := h.opts.Isolation.Memory; m > 0 {
		return m
	}
	return 16 << 30
}

// errSandboxTimeout is why a request to a sandbox process that did not
// answer in time failed; the process was killed.
var errSandboxTimeout = errors.New("the sandbox process did not answer in time and was killed")

// do sends one request and waits for its answer, at most timeout; past
// it, or when ctx ends, the process is killed (whatever it runs can hold
// it up for good).
func (s *sandbox) do(ctx context.Context, req workerRequest, timeout time.Duration) (workerResponse, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead != nil {
		return workerResponse{}, s.dead
	}
	type answer struct {
		resp workerResponse
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		if err := s.enc.Encode(req); err != nil {
			got <- answer{err: err}
			return
		}
		var resp workerResponse
		err := s.dec.Decode(&resp)
		got <- answer{resp, err}
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case a := <-got:
		if a.err != nil {
			err := fmt.Errorf("host: the sandbox process failed: %v%s", a.err, s.stderr.note())
			s.kill(err)
			return workerResponse{}, err
		}
		if a.resp.Err != nil {
			return a.resp, a.resp.Err.err()
		}
		return a.resp, nil
	case <-t.C:
		s.kill(errSandboxTimeout)
		return workerResponse{}, errSandboxTimeout
	case <-ctx.Done():
		s.kill(ctx.Err())
		return workerResponse{}, ctx.Err()
	}
}

// kill ends the process; later requests fail with why.
func (s *sandbox) kill(why error) {
	if s.dead == nil {
		s.dead = why
	}
	_ = s.stdin.Close()
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
	}
}

// close ends the process once it is idle.
func (s *sandbox) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kill(ErrClosed)
	<-s.done
}

// inspectIsolated is Inspect in a sandbox process of its own.
func (h *Host) inspectIsolated(ctx context.Context, name string, b, sidecar []byte) (*Inspection, error) {
	s, err := h.startSandbox(ctx)
	if err != nil {
		return nil, err
	}
	defer s.close()
	resp, err := s.do(ctx, workerRequest{Op: "inspect", Name: name, Bytes: b, Sidecar: sidecar}, compileWallCap*h.compileTimeout+describeTimeout+h.slack())
	if errors.Is(err, errSandboxTimeout) {
		return nil, fmt.Errorf("host: module %q: %w: compiling it and running its describe took longer than %v", name, ErrDescribe, compileWallCap*h.compileTimeout+describeTimeout)
	}
	if err != nil {
		return nil, err
	}
	return resp.Inspection, nil
}

// remote is the sandbox side of a module loaded with Module.Isolated: the
// process that holds it, started again (and the module loaded again) after
// a call that killed it.
type remote struct {
	h  *Host
	m  Module
	mu sync.Mutex
	s  *sandbox // nil until started, or after it died
}

// session returns a live sandbox process with the module loaded.
func (r *remote) session(ctx context.Context) (*sandbox, workerResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.s != nil && r.s.dead == nil {
		return r.s, workerResponse{}, nil
	}
	s, err := r.h.startSandbox(ctx)
	if err != nil {
		return nil, workerResponse{}, err
	}
	resp, err := s.do(ctx, workerRequest{Op: "load", Name: r.m.Name, Bytes: r.m.Bytes, Sidecar: r.m.Sidecar,
		ModLimits: r.m.Limits, Config: r.m.Config}, compileWallCap*r.h.compileTimeout+describeTimeout+r.h.slack())
	if err != nil {
		s.close()
		if errors.Is(err, errSandboxTimeout) {
			err = fmt.Errorf("host: module %q: %w: loading it took longer than %v", r.m.Name, ErrDescribe, compileWallCap*r.h.compileTimeout+describeTimeout)
		}
		return nil, workerResponse{}, err
	}
	r.s = s
	return s, resp, nil
}

func (r *remote) close() {
	r.mu.Lock()
	s := r.s
	r.s = nil
	r.mu.Unlock()
	if s != nil {
		s.close()
	}
}

// loadIsolated is Load for Module.Isolated: the sandbox process compiles
// and describes the module; this process keeps its description, and each
// call goes to the process.
func (h *Host) loadIsolated(ctx context.Context, m Module, limits Limits) (*Loaded, error) {
	if len(m.Grants) > 0 {
		return nil, fmt.Errorf("host: module %q: an isolated module runs with no grants; it was given %d", m.Name, len(m.Grants))
	}
	r := &remote{h: h, m: m}
	r.m.Bytes = bytes.Clone(m.Bytes)
	_, resp, err := r.session(ctx)
	if err != nil {
		return nil, err
	}
	desc, in, out, err := parseDescription(mustJSON(resp.Desc))
	if err != nil {
		r.close()
		return nil, fmt.Errorf("host: module %q: %w", m.Name, err)
	}
	l := &Loaded{h: h, name: m.Name, sha: resp.SHA256, abi: resp.ABI, limits: resp.Limits, desc: desc,
		has: map[string]bool{}, idle: make(chan struct{}), remote: r, unapproved: true}
	for i, td := range desc.Tools {
		flags := l.toolFlags(td.Annotations)
		desc.Tools[i].Annotations = grantedAnnotations(td.Annotations, flags)
		l.tools = append(l.tools, &moduleTool{
			l: l, name: td.Name, in: in[i], out: out[i], spec: toolSpec(td),
			flags: flags, prefix: callPrefix(td.Name), anyObject: acceptsAnyObject(in[i].JSON()),
		})
	}
	h.mu.Lock()
	h.loaded[l] = true
	h.mu.Unlock()
	return l, nil
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// callRemote runs one call of an isolated module's tool in its sandbox
// process; a process that does not answer within the call's time limit
// (and a grace) is killed, the call fails with the time limit, and the
// next call starts a new process.
func (t *moduleTool) callRemote(ctx context.Context, c tool.Call, rec *CallRecord) (tool.Result, error) {
	l := t.l
	s, _, err := l.remote.session(ctx)
	if err != nil {
		rec.Outcome = OutcomeFailed
		return tool.Errorf("%v", err), nil
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return tool.Result{}, err
	}
	resp, err := s.do(ctx, workerRequest{Op: "call", Tool: t.name, Call: raw}, l.limits.Timeout+l.h.slack())
	switch {
	case errors.Is(err, errSandboxTimeout):
		rec.Outcome = OutcomeLimit
		return tool.Errorf("%v", timeLimitErr(l.limits.Timeout)), nil
	case ctx.Err() != nil:
		rec.Outcome = OutcomeCancelled
		return tool.Errorf("tool %s: call cancelled: %v", t.name, ctx.Err()), ctx.Err()
	case err != nil && resp.Result == nil:
		rec.Outcome = OutcomeFailed
		return tool.Errorf("%v", err), nil
	}
	if resp.Record != nil {
		start, id := rec.Start, rec.CallID
		*rec = *resp.Record
		rec.Start, rec.CallID, rec.Module = start, id, l.name
	}
	return *resp.Result, err
}

// tailBuffer keeps the last bytes written to it: a sandbox process's
// stderr, for the error when it dies.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = b.buf[len(b.buf)-b.max:]
	}
	return len(p), nil
}

// note returns the tail as a suffix for an error message, "" when empty.
func (b *tailBuffer) note() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(bytes.TrimSpace(b.buf)) == 0 {
		return ""
	}
	s := string(bytes.TrimSpace(b.buf))
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return "; its stderr: " + s
}
