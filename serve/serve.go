package serve

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gofrs/flock"

	"github.com/autoagent-go/autoagent/eval"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/session"
)

// Options configure a Server. Agent is required; the zero value of every
// other field means none, or the default it names.
type Options struct {
	// Agent runs the runs. Each run gets a copy whose Checkpoint and
	// Journal are the run's own (Dir); its other fields are shared.
	Agent *loop.Agent
	// Dir keeps the runs: each run's record, events, checkpoint and
	// journal, and the audit log of decisions (audit.jsonl). With it, runs
	// outlive the server: a paused run is decided after a restart, and
	// one that was going when the server died is listed as interrupted.
	// "" keeps runs in memory only.
	Dir string
	// Sessions, when set, serves the session store: list, show, and runs
	// that continue a session.
	Sessions session.Store
	// Plugins, when set, serves the plugins directory: list, inspect,
	// approve, revoke, verify. Approvals and revocations are written to
	// its manifest (and audit log) with the operator's token name as
	// `by`, keeping its trust store (Options.Trust) current.
	Plugins *plugindir.Dir

	// Tokens are the bearer tokens accepted. Without any, only loopback
	// peers are served, as LocalName with every role.
	Tokens []Token
	// LocalName is who a tokenless loopback client is in the audit logs
	// (default "local").
	LocalName string
	// AllowedHosts are Host names accepted besides IP literals and
	// localhost (DNS rebinding defence); AllowedOrigins are browser
	// origins accepted besides the server's own.
	AllowedHosts, AllowedOrigins []string

	// MaxBodyBytes bounds a request body (default 1 MiB).
	MaxBodyBytes int64
	// MaxEvents bounds the events kept per run (default 10 000): older
	// ones are dropped, and a stream resuming before them is told so.
	MaxEvents int
	// MaxStreams bounds the event streams open at once (default 256);
	// MaxStreamTime bounds one stream's life (default 1 h): the client
	// reconnects with Last-Event-ID.
	MaxStreams    int
	MaxStreamTime time.Duration
	// MaxRunning bounds the runs going at once (default 32); others wait
	// their turn, listed as running.
	MaxRunning int
	// EvalDir is the directory of the case files POST /v1/evals may name
	// (relative to it; nothing outside it is read, the scripts the cases
	// name included). "" allows cases given inline only, without scripts.
	EvalDir string
	// EvalAgent builds the agent of each eval run; nil copies Agent
	// without its memory, recorder, checkpoint and journal. A case's
	// Scripts reach it as absolute paths inside EvalDir.
	EvalAgent eval.NewAgent
	// Webhook, when its URL is set, is notified (signed) when a run
	// awaits a decision and when it ends.
	Webhook Webhook
	// Notes receives what the server tells a person (a record it could
	// not write). Nil discards it.
	Notes io.Writer
}

// Server is the HTTP API: an http.Handler. Close it to stop its runs.
type Server struct {
	opts      Options
	tokens    []hashedToken
	localName string
	mux       *http.ServeMux
	notes     io.Writer

	runsDir    string
	evalsDir   string // Dir/evals
	evalDirAbs string // EvalDir, absolute
	audit      *auditLog
	notify     *notifier    // nil without a webhook
	lock       *flock.Flock // Dir/serve.lock: one server per directory

	mu      sync.Mutex
	runs    map[string]*run
	order   []*run // by creation
	closed  bool
	done    chan struct{} // closed by Close: streams end
	slots   chan struct{}
	streams atomic.Int64
	wg      sync.WaitGroup

	evals     map[string]*evalRun
	evalOrder []*evalRun
	evalSlots chan struct{} // one eval at a time

	patterns []string // the routes, for the test against openapi.json
}

// ErrOptions is wrapped by New's errors for Options that cannot work.
var ErrOptions = errors.New("serve: invalid options")

// New returns a Server. With Dir, the runs kept there are loaded: those
// that were going when the last server stopped are marked interrupted.
func New(opts Options) (*Server, error) {
	if opts.Agent == nil {
		return nil, fmt.Errorf("%w: Agent is required", ErrOptions)
	}
	if len(opts.Tokens) > 0 {
		if err := checkTokens(opts.Tokens); err != nil {
			return nil, err
		}
	}
	opts.MaxBodyBytes = cmp.Or(opts.MaxBodyBytes, 1<<20)
	opts.MaxEvents = cmp.Or(opts.MaxEvents, 10000)
	opts.MaxStreams = cmp.Or(opts.MaxStreams, 256)
	opts.MaxStreamTime = cmp.Or(opts.MaxStreamTime, time.Hour)
	opts.MaxRunning = cmp.Or(opts.MaxRunning, 32)
	if opts.MaxBodyBytes < 0 || opts.MaxEvents < 0 || opts.MaxStreams < 0 || opts.MaxStreamTime < 0 || opts.MaxRunning < 0 {
		return nil, fmt.Errorf("%w: a negative bound", ErrOptions)
	}
	if err := checkWebhook(opts.Webhook); err != nil {
		return nil, err
	}
	if len(opts.LocalName) > 128 || strings.ContainsFunc(opts.LocalName, unicode.IsControl) || !utf8.ValidString(opts.LocalName) {
		return nil, fmt.Errorf("%w: LocalName %q: want at most 128 bytes of text", ErrOptions, opts.LocalName)
	}
	s := &Server{
		opts:      opts,
		localName: cmp.Or(opts.LocalName, "local"),
		notes:     cmp.Or[io.Writer](opts.Notes, io.Discard),
		runs:      map[string]*run{},
		slots:     make(chan struct{}, opts.MaxRunning),
		done:      make(chan struct{}),
		evals:     map[string]*evalRun{},
		evalSlots: make(chan struct{}, 1),
	}
	if opts.EvalDir != "" {
		abs, err := filepath.Abs(opts.EvalDir)
		if err != nil {
			return nil, fmt.Errorf("%w: EvalDir: %v", ErrOptions, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("%w: eval directory %s: not a directory (%v)", ErrOptions, opts.EvalDir, err)
		}
		s.evalDirAbs = abs
	}
	for _, t := range opts.Tokens {
		s.tokens = append(s.tokens, hashedToken{sum: sha256.Sum256([]byte(t.Secret)), name: t.Name, role: t.Role})
	}
	if opts.Dir != "" {
		s.runsDir = opts.Dir
		if err := os.MkdirAll(s.runsDir, 0o700); err != nil {
			return nil, fmt.Errorf("serve: runs directory: %w", err)
		}
		lock := flock.New(filepath.Join(opts.Dir, "serve.lock"))
		if ok, err := lock.TryLock(); err != nil || !ok {
			return nil, fmt.Errorf("%w: runs directory %s is in use by another server (%s held): one server per directory", ErrOptions, opts.Dir, lock.Path())
		}
		s.lock = lock
		var err error
		if s.audit, err = openAudit(filepath.Join(opts.Dir, "audit.jsonl")); err != nil {
			lock.Unlock()
			return nil, err
		}
		if opts.Webhook.URL != "" {
			// Before the runs load: one found interrupted is notified.
			s.notify = newNotifier(opts.Webhook, s.note)
		}
		s.evalsDir = filepath.Join(opts.Dir, "evals")
		err = os.MkdirAll(s.evalsDir, 0o700)
		if err == nil {
			err = s.loadRuns()
		}
		if err == nil {
			err = s.loadEvals()
		}
		if err != nil {
			s.notify.close(0)
			s.audit.Close()
			lock.Unlock()
			return nil, err
		}
	} else if opts.Webhook.URL != "" {
		s.notify = newNotifier(opts.Webhook, s.note)
	}
	s.routes()
	return s, nil
}

// Close cancels the runs going (each is saved as interrupted: a restarted
// server lists it so) and waits for them to stop.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	runs := append([]*run(nil), s.order...)
	evals := append([]*evalRun(nil), s.evalOrder...)
	s.mu.Unlock()
	for _, r := range runs {
		r.cancel(errShutdown)
	}
	for _, ev := range evals {
		ev.mu.Lock()
		if ev.stop != nil {
			ev.stop(errShutdown)
		}
		ev.mu.Unlock()
	}
	s.wg.Wait()
	// The runs just interrupted are notified, for a few seconds at most.
	s.notify.close(5 * time.Second)
	if s.audit != nil {
		return errors.Join(s.audit.Close(), s.lock.Unlock())
	}
	return nil
}

// route is one endpoint: the least role that may call it, and its handler.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p principal) *apiError

func (s *Server) handle(pattern string, least Role, h handlerFunc) {
	s.patterns = append(s.patterns, pattern)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		p, aerr := s.authenticate(r)
		if aerr == nil && p.role < least {
			aerr = &apiError{http.StatusForbidden, "forbidden", fmt.Sprintf("%s (a %s) may not do this: it needs the %s role", p.name, p.role, least)}
		}
		if aerr == nil {
			aerr = h(w, r, p)
		}
		if aerr != nil {
			if aerr.status == http.StatusUnauthorized {
				w.Header().Set("WWW-Authenticate", `Bearer realm="autoagent"`)
			}
			writeJSON(w, aerr.status, map[string]any{"error": map[string]string{"code": aerr.code, "message": aerr.msg}})
		}
	})
}

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openAPI)
	})
	s.handle("POST /v1/runs", RoleRunner, s.startRun)
	s.handle("GET /v1/runs", RoleViewer, s.listRuns)
	s.handle("GET /v1/runs/{id}", RoleViewer, s.getRun)
	s.handle("POST /v1/runs/{id}/decisions", RoleOperator, s.decide)
	s.handle("POST /v1/runs/{id}/cancel", RoleRunner, s.cancelRun)
	s.handle("GET /v1/runs/{id}/events", RoleViewer, s.events)
	s.handle("GET /v1/runs/{id}/trace", RoleViewer, s.getTrace)
	s.handle("POST /v1/evals", RoleRunner, s.startEval)
	s.handle("GET /v1/evals", RoleViewer, s.listEvals)
	s.handle("GET /v1/evals/{id}", RoleViewer, s.getEval)
	s.handle("GET /v1/evals/{id}/report.html", RoleViewer, s.evalHTML)
	s.handle("GET /v1/sessions", RoleViewer, s.listSessions)
	s.handle("GET /v1/sessions/{user}/{session}", RoleViewer, s.showSession)
	s.handle("POST /v1/sessions/{user}/{session}/runs", RoleRunner, s.continueSession)
	s.handle("GET /v1/tools", RoleViewer, s.listTools)
	s.handle("GET /v1/tools/verify", RoleViewer, s.verifyTools)
	s.handle("GET /v1/tools/{file}", RoleViewer, s.inspectTool)
	s.handle("POST /v1/tools/{file}/approve", RoleOperator, s.approveTool)
	s.handle("POST /v1/tools/{target}/revoke", RoleOperator, s.revokeTool)
	s.routeConsole()
	s.handle("/", RoleViewer, func(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
		return &apiError{http.StatusNotFound, "not_found", fmt.Sprintf("no endpoint %s %s: see /openapi.json", r.Method, r.URL.Path)}
	})
}

// ServeHTTP checks Host and Origin, then serves the request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hostAllowed(r.Host) {
		writeJSON(w, http.StatusForbidden, map[string]any{"error": map[string]string{"code": "host_not_allowed",
			"message": fmt.Sprintf("Host %q is not an IP address, localhost or an allowed host (--allowed-host): refused against DNS rebinding", r.Host)}})
		return
	}
	if !s.originAllowed(r.Header.Get("Origin"), r.Host) {
		writeJSON(w, http.StatusForbidden, map[string]any{"error": map[string]string{"code": "origin_not_allowed",
			"message": fmt.Sprintf("Origin %q is not this server's nor an allowed origin (--allowed-origin)", r.Header.Get("Origin"))}})
		return
	}
	s.mux.ServeHTTP(w, r)
}

// apiError is an error answer: {"error": {"code", "message"}}.
type apiError struct {
	status    int
	code, msg string
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "bad_request", fmt.Sprintf(format, args...)}
}

func internalError(err error) *apiError {
	return &apiError{http.StatusInternalServerError, "internal", err.Error()}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// decode reads r's body, bounded, as exactly one JSON object of v's shape.
// It asks for Content-Type application/json: a browser cannot send that
// cross-origin without a preflight this server never grants.
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) *apiError {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return &apiError{http.StatusUnsupportedMediaType, "unsupported_media_type", "send the body as JSON with Content-Type: application/json"}
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return &apiError{http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is larger than %d bytes", s.opts.MaxBodyBytes)}
		}
		return badRequest("malformed JSON body: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return &apiError{http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is larger than %d bytes", s.opts.MaxBodyBytes)}
		}
		return badRequest("malformed JSON body: one JSON object expected, more follows")
	}
	return nil
}

// errShutdown and errCancelled say why a run's context ended.
var (
	errShutdown  = errors.New("serve: the server stopped")
	errCancelled = errors.New("serve: cancelled through the API")
)

func (s *Server) note(format string, args ...any) {
	fmt.Fprintf(s.notes, "autoagent serve: "+format+"\n", args...)
}

var _ http.Handler = (*Server)(nil)

// background is a context for runs: they belong to the server, not to the
// request that started them.
func background() context.Context { return context.Background() }
