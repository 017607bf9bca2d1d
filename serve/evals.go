package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/autoagent-go/autoagent/eval"
	"github.com/autoagent-go/autoagent/internal/atomicfile"
	"github.com/autoagent-go/autoagent/loop"
)

// EvalStatus is an eval's status.
type EvalStatus string

// The statuses of an eval.
const (
	EvalRunning   EvalStatus = "running"
	EvalCompleted EvalStatus = "completed"
	// EvalFailed is an eval that could not run to its end (an agent
	// could not be built): it has no report. Failing cases are a
	// completed eval's.
	EvalFailed EvalStatus = "failed"
	// EvalInterrupted is an eval that was going when its server stopped.
	EvalInterrupted EvalStatus = "interrupted"
)

// evalRecord is what an eval keeps (eval.json) and the API's list row.
type evalRecord struct {
	ID     string     `json:"id"`
	Status EvalStatus `json:"status"`
	// File is the case file, relative to the eval directory; "" for
	// cases given inline.
	File        string    `json:"file,omitempty"`
	K           int       `json:"k"`
	Concurrency int       `json:"concurrency"`
	StartedBy   string    `json:"started_by"`
	Created     time.Time `json:"created_at"`
	Updated     time.Time `json:"updated_at"`
	// Cases counts the cases; Passed those whose k runs all passed,
	// Failed the others (set once completed).
	Cases     int     `json:"cases"`
	Passed    int     `json:"passed"`
	Failed    int     `json:"failed"`
	PassAt1   float64 `json:"pass_at_1"`
	PassHatK  float64 `json:"pass_hat_k"`
	Error     string  `json:"error,omitempty"`
	HasReport bool    `json:"has_report"`
}

// evalRun is one eval the server knows.
type evalRun struct {
	dir  string // "" without Options.Dir
	mu   sync.Mutex
	rec  evalRecord
	json []byte // the report, without Dir
	html []byte
	stop context.CancelCauseFunc
}

func (ev *evalRun) view() evalRecord {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	return ev.rec
}

func (ev *evalRun) saveLocked() error {
	if ev.dir == "" {
		return nil
	}
	b, err := json.Marshal(ev.rec)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(ev.dir, "eval.json"), b, 0o600)
}

// evalRequest is the body of POST /v1/evals: a case file of the eval
// directory, or the cases themselves.
type evalRequest struct {
	File        string            `json:"file"`
	Cases       []json.RawMessage `json:"cases"`
	K           int               `json:"k"`
	Concurrency int               `json:"concurrency"`
}

// Bounds of one eval.
const (
	maxEvalK           = 100
	maxEvalConcurrency = 16
	maxEvalRuns        = 10000    // cases × k
	maxCaseFileBytes   = 64 << 20 // a case file read
	evalsKeptInMemory  = 1000     // without Dir, the newest evals kept
	evalIDPrefix       = "eval_"
	evalIDHexLen       = 24
	errCodeOutside     = "outside_eval_dir"
	errCodeNoEvalDir   = "no_eval_dir"
	errCodeUnknownEval = "unknown_eval"
)

// errOutside is the answer to a path that leaves the eval directory.
func errOutside(what, name, why string) *apiError {
	return &apiError{http.StatusForbidden, errCodeOutside, fmt.Sprintf(
		"%s %q %s: name a file inside the eval directory, relative to it (no absolute path, no \"..\", no symbolic link out of it)", what, name, why)}
}

// evalFS is the eval directory, opened so no name resolves outside it
// (os.Root: "..", absolute names and symbolic links out are refused by
// the kernel-facing lookup, not only by the name's spelling).
func (s *Server) evalFS() (*os.Root, *apiError) {
	if s.opts.EvalDir == "" {
		return nil, &apiError{http.StatusBadRequest, errCodeNoEvalDir,
			`this server has no eval directory (autoagent serve --evals DIR, Options.EvalDir): give the cases inline as {"cases": [...]}`}
	}
	root, err := os.OpenRoot(s.opts.EvalDir)
	if err != nil {
		return nil, internalError(fmt.Errorf("the eval directory: %w", err))
	}
	return root, nil
}

// localName checks a name relative to the eval directory by its spelling:
// the first fence (the second is os.Root's lookup).
func localName(what, name string) (string, *apiError) {
	if name == "" {
		return "", badRequest("%s: an empty name", what)
	}
	if strings.ContainsRune(name, '\\') || strings.ContainsRune(name, 0) {
		return "", errOutside(what, name, "holds a backslash or NUL")
	}
	if !filepath.IsLocal(name) {
		return "", errOutside(what, name, "is not a relative name inside the directory")
	}
	return path.Clean(name), nil
}

// readEvalFile reads a regular file of the eval directory, bounded.
func readEvalFile(root *os.Root, what, name string) ([]byte, *apiError) {
	// O_NONBLOCK: a FIFO planted in the directory cannot hold the
	// request open.
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &apiError{http.StatusNotFound, "unknown_case_file", fmt.Sprintf("%s %q: no such file in the eval directory", what, name)}
	}
	if err != nil {
		return nil, errOutside(what, name, "cannot be opened inside the eval directory ("+rootErr(err)+")")
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, internalError(err)
	}
	if !st.Mode().IsRegular() {
		return nil, badRequest("%s %q is not a regular file", what, name)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxCaseFileBytes+1))
	if err != nil {
		return nil, internalError(err)
	}
	if len(b) > maxCaseFileBytes {
		return nil, badRequest("%s %q is larger than %d bytes", what, name, maxCaseFileBytes)
	}
	return b, nil
}

// rootErr is an os.Root error without the directory's own path.
func rootErr(err error) string {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// evalCases reads the request's cases and fences their scripts: each one
// must be a file inside the eval directory, and is handed to the agent
// factory as its absolute path there.
func (s *Server) evalCases(req *evalRequest) ([]eval.Case, *apiError) {
	var (
		cases []eval.Case
		base  string // the directory scripts are relative to, inside EvalDir
		root  *os.Root
	)
	switch {
	case req.File != "" && req.Cases != nil:
		return nil, badRequest(`give "file" or "cases", not both`)
	case req.File != "":
		name, e := localName("case file", req.File)
		if e != nil {
			return nil, e
		}
		if root, e = s.evalFS(); e != nil {
			return nil, e
		}
		defer root.Close()
		b, e := readEvalFile(root, "case file", name)
		if e != nil {
			return nil, e
		}
		var err error
		if cases, err = eval.ReadCases(bytes.NewReader(b), name); err != nil {
			return nil, badRequest("case file: %v", err)
		}
		base = path.Dir(name)
	case len(req.Cases) > 0:
		var lines bytes.Buffer
		for i, c := range req.Cases {
			var compact bytes.Buffer
			if err := json.Compact(&compact, c); err != nil {
				return nil, badRequest("case %d: %v", i+1, err)
			}
			lines.Write(compact.Bytes())
			lines.WriteByte('\n')
		}
		var err error
		if cases, err = eval.ReadCases(&lines, "cases"); err != nil {
			return nil, badRequest("%v (the line is the case's place in \"cases\")", err)
		}
		base = "."
	default:
		return nil, badRequest(`no cases: give {"file": "NAME.jsonl"} (a case file of the eval directory) or {"cases": [{"id": ..., "prompt": ..., "expect": {...}}]}`)
	}
	if len(cases) == 0 {
		return nil, badRequest("no cases: the case file holds none")
	}
	for i := range cases {
		for j, sc := range cases[i].Scripts {
			if path.IsAbs(sc) || filepath.IsAbs(sc) {
				return nil, errOutside("script", sc, "is an absolute path")
			}
			name, e := localName("script", path.Join(base, sc))
			if e != nil {
				return nil, errOutside("script", sc, "leaves the eval directory")
			}
			if root == nil {
				if root, e = s.evalFS(); e != nil {
					return nil, e
				}
				defer root.Close()
			}
			st, err := root.Stat(name)
			if errors.Is(err, fs.ErrNotExist) {
				return nil, &apiError{http.StatusNotFound, "unknown_case_file", fmt.Sprintf("case %q: script %q: no such file in the eval directory", cases[i].ID, sc)}
			}
			if err != nil {
				return nil, errOutside("script", sc, "cannot be reached inside the eval directory ("+rootErr(err)+")")
			}
			if !st.Mode().IsRegular() {
				return nil, badRequest("case %q: script %q is not a regular file", cases[i].ID, sc)
			}
			cases[i].Scripts[j] = filepath.Join(s.evalDirAbs, filepath.FromSlash(name))
		}
	}
	return cases, nil
}

func newEvalID() string {
	var b [evalIDHexLen / 2]byte
	rand.Read(b[:])
	return evalIDPrefix + hex.EncodeToString(b[:])
}

func validEvalID(id string) bool {
	h, ok := strings.CutPrefix(id, evalIDPrefix)
	if !ok || len(h) != evalIDHexLen {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// startEval runs a case file, or inline cases, in the background.
func (s *Server) startEval(w http.ResponseWriter, r *http.Request, p principal) *apiError {
	var req evalRequest
	if e := s.decode(w, r, &req); e != nil {
		return e
	}
	switch {
	case req.K < 0 || req.K > maxEvalK:
		return badRequest(`"k" is %d: want 1 to %d (0 means 1)`, req.K, maxEvalK)
	case req.Concurrency < 0 || req.Concurrency > maxEvalConcurrency:
		return badRequest(`"concurrency" is %d: want 1 to %d (0 means 1)`, req.Concurrency, maxEvalConcurrency)
	}
	req.K, req.Concurrency = max(req.K, 1), max(req.Concurrency, 1)
	cases, e := s.evalCases(&req)
	if e != nil {
		return e
	}
	if n := len(cases) * req.K; n > maxEvalRuns {
		return badRequest("%d cases × k %d is %d runs, more than %d: split the suite", len(cases), req.K, n, maxEvalRuns)
	}
	now := time.Now().UTC()
	ev := &evalRun{rec: evalRecord{ID: newEvalID(), Status: EvalRunning, File: req.File, K: req.K, Concurrency: req.Concurrency,
		StartedBy: p.name, Created: now, Updated: now, Cases: len(cases)}}
	if err := s.audit.write(auditEntry{Action: "eval", By: p.name, Eval: ev.rec.ID, File: req.File}); err != nil {
		return internalError(err)
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return &apiError{http.StatusServiceUnavailable, "shutting_down", "the server is stopping"}
	}
	if s.evalsDir != "" {
		ev.dir = filepath.Join(s.evalsDir, ev.rec.ID)
		if err := os.Mkdir(ev.dir, 0o700); err != nil {
			s.mu.Unlock()
			return internalError(err)
		}
	}
	ev.mu.Lock()
	if err := ev.saveLocked(); err != nil {
		ev.mu.Unlock()
		s.mu.Unlock()
		return internalError(err)
	}
	ctx, stop := context.WithCancelCause(background())
	ev.stop = stop
	ev.mu.Unlock()
	s.evals[ev.rec.ID] = ev
	s.evalOrder = append(s.evalOrder, ev)
	if s.evalsDir == "" && len(s.evalOrder) > evalsKeptInMemory {
		old := s.evalOrder[0]
		if old.view().Status != EvalRunning {
			delete(s.evals, old.rec.ID)
			s.evalOrder = slices.Delete(s.evalOrder, 0, 1)
		}
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer stop(nil)
		s.runEval(ctx, ev, cases, eval.Options{K: req.K, Concurrency: req.Concurrency})
	}()
	writeJSON(w, http.StatusAccepted, map[string]string{"id": ev.rec.ID})
	return nil
}

// runEval runs the eval when a slot is free, and keeps its report.
func (s *Server) runEval(ctx context.Context, ev *evalRun, cases []eval.Case, opts eval.Options) {
	var rep *eval.Report
	var err error
	select {
	case s.evalSlots <- struct{}{}:
		rep, err = eval.RunK(ctx, s.evalAgent, cases, opts)
		<-s.evalSlots
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	var jsonb, htmlb []byte
	if err == nil {
		if jsonb, err = json.Marshal(rep); err == nil {
			var buf bytes.Buffer
			if err = eval.WriteHTML(&buf, rep, eval.HTMLOptions{Title: "autoagent eval " + ev.rec.ID}); err == nil {
				htmlb = buf.Bytes()
			}
		}
	}
	if err == nil && ev.dir != "" {
		err = errors.Join(atomicfile.Write(filepath.Join(ev.dir, "report.json"), jsonb, 0o600),
			atomicfile.Write(filepath.Join(ev.dir, "report.html"), htmlb, 0o600))
	}
	ev.mu.Lock()
	defer ev.mu.Unlock()
	ev.stop = nil
	ev.rec.Updated = time.Now().UTC()
	switch {
	case errors.Is(context.Cause(ctx), errShutdown):
		ev.rec.Status = EvalInterrupted
	case err != nil:
		ev.rec.Status, ev.rec.Error = EvalFailed, err.Error()
	default:
		ev.rec.Status, ev.rec.HasReport = EvalCompleted, true
		ev.rec.PassAt1, ev.rec.PassHatK = rep.PassAt1, rep.PassHatK
		for _, c := range rep.Cases {
			if c.Runs > 0 && c.Passes == c.Runs {
				ev.rec.Passed++
			} else {
				ev.rec.Failed++
			}
		}
		if ev.dir == "" {
			ev.json, ev.html = jsonb, htmlb
		}
	}
	if err := ev.saveLocked(); err != nil {
		s.note("eval %s: save its record: %v", ev.rec.ID, err)
	}
}

// evalAgent builds an eval run's agent: Options.EvalAgent's, or a copy of
// the server's agent that carries nothing from run to run.
func (s *Server) evalAgent(ctx context.Context, c *eval.Case, run int) (*loop.Agent, error) {
	if s.opts.EvalAgent != nil {
		return s.opts.EvalAgent(ctx, c, run)
	}
	a := *s.opts.Agent
	a.Knowledge.Memory, a.Recorder, a.Checkpoint, a.Journal = nil, nil, nil, nil
	return &a, nil
}

func (s *Server) lookupEval(id string) (*evalRun, *apiError) {
	s.mu.Lock()
	ev := s.evals[id]
	s.mu.Unlock()
	if ev == nil {
		return nil, &apiError{http.StatusNotFound, errCodeUnknownEval, fmt.Sprintf("no eval %q: GET /v1/evals lists them", id)}
	}
	return ev, nil
}

func (s *Server) listEvals(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	s.mu.Lock()
	evs := slices.Clone(s.evalOrder)
	s.mu.Unlock()
	out := make([]evalRecord, 0, len(evs))
	for _, ev := range evs {
		out = append(out, ev.view())
	}
	writeJSON(w, http.StatusOK, map[string]any{"evals": out})
	return nil
}

// report returns the eval's report in the form asked (report.json or
// report.html), or why there is none.
func (s *Server) report(id, file string) ([]byte, *apiError) {
	ev, e := s.lookupEval(id)
	if e != nil {
		return nil, e
	}
	ev.mu.Lock()
	rec, jsonb, htmlb := ev.rec, ev.json, ev.html
	ev.mu.Unlock()
	if !rec.HasReport {
		msg := fmt.Sprintf("eval %s is %s: it has no report", rec.ID, rec.Status)
		if rec.Status == EvalRunning {
			msg = fmt.Sprintf("eval %s is running: GET /v1/evals says when it completed", rec.ID)
		} else if rec.Error != "" {
			msg += ": " + rec.Error
		}
		return nil, &apiError{http.StatusConflict, "no_report", msg}
	}
	if ev.dir == "" {
		if file == "report.html" {
			return htmlb, nil
		}
		return jsonb, nil
	}
	b, err := os.ReadFile(filepath.Join(ev.dir, file))
	if err != nil {
		return nil, internalError(fmt.Errorf("eval %s: its report: %w", rec.ID, err))
	}
	return b, nil
}

// getEval answers the eval's report: the JSON of `autoagent eval --json`.
func (s *Server) getEval(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	b, e := s.report(r.PathValue("id"), "report.json")
	if e != nil {
		return e
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
	return nil
}

// evalHTML answers the eval's report as the page of `autoagent eval
// --html`. The page is self-contained; its own script draws the curve,
// so the policy allows inline script and style, and nothing from
// elsewhere. It is sandboxed: the page runs in an origin of its own, so
// a script in it (were the model's text ever to escape its escaping)
// reads nothing a console on the server's origin keeps.
func (s *Server) evalHTML(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	b, e := s.report(r.PathValue("id"), "report.html")
	if e != nil {
		return e
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	w.Write(b)
	return nil
}

// loadEvals reads the evals of Dir/evals: one that was going is
// interrupted.
func (s *Server) loadEvals() error {
	err := loadRecords(s.evalsDir, "eval", "eval.json", validEvalID, func(name, dir string, b []byte) error {
		ev := &evalRun{dir: dir}
		if err := json.Unmarshal(b, &ev.rec); err != nil || ev.rec.ID != name {
			s.note("eval %s: its record is unreadable (%v): skipped, left as it is", name, err)
			return nil
		}
		if ev.rec.Status == EvalRunning {
			ev.rec.Status, ev.rec.Updated = EvalInterrupted, time.Now().UTC()
			if err := ev.saveLocked(); err != nil {
				s.note("eval %s: save its record: %v", ev.rec.ID, err)
			}
		}
		s.evals[ev.rec.ID] = ev
		s.evalOrder = append(s.evalOrder, ev)
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(s.evalOrder, func(a, b *evalRun) int { return a.rec.Created.Compare(b.rec.Created) })
	return nil
}
