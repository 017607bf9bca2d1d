package serve

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/autoagent-go/autoagent/internal/atomicfile"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/session"
)

// Status is a run's status.
type Status string

// The statuses of a run.
const (
	StatusRunning          Status = "running"
	StatusAwaitingApproval Status = "awaiting_approval"
	StatusCompleted        Status = "completed"
	StatusFailed           Status = "failed"
	StatusCancelled        Status = "cancelled"
	// StatusInterrupted is a run that was going when its server stopped:
	// its transcript is what its last checkpoint holds.
	StatusInterrupted Status = "interrupted"
)

func (st Status) ended() bool {
	switch st {
	case StatusCompleted, StatusFailed, StatusCancelled, StatusInterrupted:
		return true
	}
	return false
}

// record is what a run keeps in its directory (run.json), and the API's
// view of it.
type record struct {
	ID        string       `json:"id"`
	Status    Status       `json:"status"`
	Prompt    string       `json:"prompt"`
	Session   *session.Key `json:"session,omitempty"`
	StartedBy string       `json:"started_by"`
	Created   time.Time    `json:"created_at"`
	Updated   time.Time    `json:"updated_at"`
	Pending   []pendingRow `json:"pending"`
	// Result is the `run --json` object once the run ended (not for an
	// interrupted run, which did not).
	Result *loop.Result `json:"result"`
	Error  string       `json:"error,omitempty"`
	// Messages is the transcript of an interrupted run, from its last
	// checkpoint.
	Messages []llm.Message `json:"messages,omitempty"`
}

// pendingRow is a call awaiting a decision.
type pendingRow struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Reason    string          `json:"reason,omitempty"`
	Source    string          `json:"source,omitempty"`
	Parent    string          `json:"parent,omitempty"`
	// Digest binds a decision to these exact arguments (loop.PendingCall).
	Digest string `json:"digest"`
}

func pendingRows(ps []loop.PendingCall) []pendingRow {
	rows := make([]pendingRow, 0, len(ps))
	for _, p := range ps {
		args := p.Call.Arguments
		if !json.Valid(args) {
			b, _ := json.Marshal(string(args))
			args = b
		}
		rows = append(rows, pendingRow{CallID: p.Call.ID, Name: p.Call.Name, Arguments: args, Reason: p.Reason, Source: p.Source, Parent: p.Parent, Digest: p.Digest()})
	}
	return rows
}

// run is one run the server knows.
type run struct {
	s   *Server
	dir string // "" without Options.Dir

	mu      sync.Mutex
	rec     record
	stop    context.CancelCauseFunc // set while going
	state   *loop.RunState          // the paused state, in memory without Dir
	history []llm.Message           // a session run's stored messages at its start
	events  *eventLog
	trace   *traceLog
}

func (r *run) view() record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rec
}

func (r *run) cancel(cause error) {
	r.mu.Lock()
	stop := r.stop
	r.mu.Unlock()
	if stop != nil {
		stop(cause)
	}
}

// save writes the record (run.json) atomically.
func (r *run) save() error {
	if r.dir == "" {
		return nil
	}
	b, err := json.Marshal(r.rec)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(r.dir, "run.json"), b, 0o600)
}

func (r *run) statePath() string { return filepath.Join(r.dir, "state.json") }

// setStatus changes the status, saves the record and tells the streams.
// r.mu is held.
func (r *run) setStatusLocked(st Status) {
	r.rec.Status = st
	r.rec.Updated = time.Now().UTC()
	if err := r.save(); err != nil {
		r.s.note("run %s: save its record: %v", r.rec.ID, err)
	}
	r.events.add(Event{Type: "status", Status: st})
	r.notifyLocked()
}

func newRunID() string {
	var b [12]byte
	rand.Read(b[:])
	return "run_" + hex.EncodeToString(b[:])
}

// validRunID accepts only the IDs this server makes: a path element never
// reaches the file system unchecked.
func validRunID(id string) bool {
	h, ok := strings.CutPrefix(id, "run_")
	if !ok || len(h) != 24 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// startRequest is the body of POST /v1/runs.
type startRequest struct {
	Prompt     string       `json:"prompt"`
	Background bool         `json:"background"`
	Session    *session.Key `json:"session,omitempty"`
}

// maxPrompt bounds a prompt's bytes.
const maxPrompt = 256 << 10

func (s *Server) startRun(w http.ResponseWriter, r *http.Request, p principal) *apiError {
	var req startRequest
	if e := s.decode(w, r, &req); e != nil {
		return e
	}
	return s.start(w, r, p, req)
}

func (s *Server) start(w http.ResponseWriter, r *http.Request, p principal, req startRequest) *apiError {
	if strings.TrimSpace(req.Prompt) == "" {
		return badRequest(`"prompt" is empty: give the task as {"prompt": "..."}`)
	}
	if len(req.Prompt) > maxPrompt {
		return badRequest(`"prompt" has %d bytes, more than %d`, len(req.Prompt), maxPrompt)
	}
	var msgs, history []llm.Message
	if req.Session != nil {
		if s.opts.Sessions == nil {
			return &apiError{http.StatusNotFound, "no_sessions", "this server has no session store (--sessions FILE, Options.Sessions)"}
		}
		if err := req.Session.Validate(); err != nil {
			return badRequest("session: %v", err)
		}
		stored, err := session.Messages(r.Context(), s.opts.Sessions, *req.Session)
		if err != nil {
			return internalError(err)
		}
		// As Runtime.Continue: the stored conversation is the history.
		history = stored
		msgs = append([]llm.Message{llm.SystemText(cmp.Or(s.opts.Agent.System, loop.DefaultSystemPrompt))}, stored...)
		msgs = append(msgs, llm.UserText(req.Prompt))
	}
	now := time.Now().UTC()
	ru := &run{s: s, rec: record{ID: newRunID(), Status: StatusRunning, Prompt: req.Prompt, Session: req.Session,
		StartedBy: p.name, Created: now, Updated: now, Pending: []pendingRow{}}, history: history}
	if err := s.register(ru); err != nil {
		return err
	}
	prompt := req.Prompt
	ru.mu.Lock()
	s.list(ru)
	s.launchLocked(ru, func(ctx context.Context, a *loop.Agent) iter.Seq2[loop.Event, error] {
		if msgs == nil {
			return a.Stream(ctx, prompt)
		}
		return a.StreamMessages(ctx, msgs)
	})
	ru.mu.Unlock()
	if !req.Background {
		if err := ru.events.waitStop(r.Context()); err != nil {
			// The client left: the run goes on.
			return nil
		}
		writeJSON(w, http.StatusOK, ru.view())
		return nil
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"id": ru.rec.ID})
	return nil
}

// register makes the run's directory and event log and lists it.
func (s *Server) register(ru *run) *apiError {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return &apiError{http.StatusServiceUnavailable, "shutting_down", "the server is stopping"}
	}
	if s.runsDir != "" {
		ru.dir = filepath.Join(s.runsDir, ru.rec.ID)
		if err := os.Mkdir(ru.dir, 0o700); err != nil {
			return internalError(err)
		}
	}
	var err error
	if ru.events, err = openEventLog(ru.dir, s.opts.MaxEvents); err != nil {
		return internalError(err)
	}
	ru.trace = &traceLog{dir: ru.dir, max: s.opts.MaxEvents}
	if err := ru.save(); err != nil {
		return internalError(err)
	}
	return nil
}

// list makes ru known to the API. ru.mu is held until it is launched, so
// nobody acts on it before.
func (s *Server) list(ru *run) {
	s.mu.Lock()
	s.runs[ru.rec.ID] = ru
	s.order = append(s.order, ru)
	s.mu.Unlock()
}

// launchLocked runs body in the background: it waits for a slot, gives
// the run its own checkpoint and journal, records its events, and saves
// how it ended. ru.mu is held.
func (s *Server) launchLocked(ru *run, body func(ctx context.Context, a *loop.Agent) iter.Seq2[loop.Event, error]) {
	ctx, stop := context.WithCancelCause(background())
	ru.stop = stop
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer stop(nil)
		res, err := s.execute(ctx, ru, body)
		s.finish(ru, res, err, context.Cause(ctx))
	}()
}

func (s *Server) execute(ctx context.Context, ru *run, body func(ctx context.Context, a *loop.Agent) iter.Seq2[loop.Event, error]) (*loop.Result, error) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
	a := *s.opts.Agent
	if ru.dir != "" {
		store, err := loop.OpenFileStore(ru.statePath())
		if err != nil {
			return nil, err
		}
		defer store.Close()
		store.Attach(&a)
	} else {
		a.Checkpoint, a.Journal = nil, nil
	}
	// The run's trace: its own, handed on to the agent's tracer. Its
	// run_id is the run's id.
	tr, err := ru.trace.tracer(a.Tracer)
	if err != nil {
		return nil, err
	}
	defer tr.Close()
	a.Tracer = tr
	id := ru.rec.ID
	a.NewRunID = func() string { return id }
	var res *loop.Result
	var runErr error
	for ev, err := range body(ctx, &a) {
		if err != nil {
			runErr = err
		}
		if ev.Type == loop.EventDone {
			res = ev.Result
			continue
		}
		if ev.Type != "" {
			ru.events.add(fromLoop(ev))
		}
	}
	return res, runErr
}

// finish records how a run ended (or paused).
func (s *Server) finish(ru *run, res *loop.Result, runErr, cause error) {
	ru.mu.Lock()
	defer ru.mu.Unlock()
	ru.stop = nil
	ru.rec.Pending = []pendingRow{}
	ru.rec.Error = ""
	var st Status
	switch {
	case errors.Is(cause, errShutdown):
		st = StatusInterrupted
		if res != nil && res.State != nil {
			ru.rec.Messages = res.State.Messages
		} else {
			ru.rec.Messages = ru.transcriptLocked()
		}
	case res != nil && res.StopReason == loop.StopApprovalRequired:
		st = StatusAwaitingApproval
		ru.rec.Pending = pendingRows(res.Pending)
		ru.state = res.State
	case res != nil && res.StopReason == loop.StopCancelled, errors.Is(cause, errCancelled):
		st = StatusCancelled
		ru.rec.Result = res
	case runErr == nil && res != nil && res.StopReason == loop.StopDone:
		st = StatusCompleted
		ru.rec.Result = res
		if ru.rec.Session != nil {
			if err := s.storeTurn(ru, res); err != nil {
				st, ru.rec.Error = StatusFailed, err.Error()
			}
		}
	default:
		st = StatusFailed
		ru.rec.Result = res
		if runErr != nil {
			ru.rec.Error = runErr.Error()
		} else if res != nil {
			ru.rec.Error = "run stopped: " + string(res.StopReason)
		}
	}
	if st != StatusAwaitingApproval {
		ru.state = nil
	}
	ru.setStatusLocked(st)
	if st.ended() {
		ru.events.end()
	} else {
		ru.events.pause()
	}
}

// storeTurn appends a finished session run's turn to its session, as
// Runtime.Continue does.
func (s *Server) storeTurn(ru *run, res *loop.Result) error {
	ctx := context.Background()
	turn := session.TurnOf(res.Messages, ru.rec.Prompt)
	if turn == nil {
		return fmt.Errorf("session %s: the run's transcript lost the prompt; nothing stored", ru.rec.Session)
	}
	stored := ru.history
	if stored == nil {
		var err error
		if stored, err = session.Messages(ctx, s.opts.Sessions, *ru.rec.Session); err != nil {
			return err
		}
	}
	turn = session.TurnToStore(stored, turn, res.Tainted)
	if _, err := s.opts.Sessions.Append(ctx, *ru.rec.Session, turn...); err != nil {
		return fmt.Errorf("session %s: store the turn: %w", ru.rec.Session, err)
	}
	return nil
}

// transcriptLocked is the transcript of the run's last checkpoint.
func (ru *run) transcriptLocked() []llm.Message {
	if ru.dir == "" {
		if ru.state != nil {
			return ru.state.Messages
		}
		return nil
	}
	st, err := loop.LoadState(ru.statePath())
	if err != nil {
		return nil
	}
	return st.Messages
}

func (s *Server) lookup(id string) (*run, *apiError) {
	s.mu.Lock()
	ru := s.runs[id]
	s.mu.Unlock()
	if ru == nil {
		return nil, &apiError{http.StatusNotFound, "unknown_run", fmt.Sprintf("no run %q: GET /v1/runs lists them", id)}
	}
	return ru, nil
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	ru, e := s.lookup(r.PathValue("id"))
	if e != nil {
		return e
	}
	writeJSON(w, http.StatusOK, ru.view())
	return nil
}

// summary is a run in the list: its record without the transcripts.
type summary struct {
	ID        string       `json:"id"`
	Status    Status       `json:"status"`
	Prompt    string       `json:"prompt"`
	Session   *session.Key `json:"session,omitempty"`
	StartedBy string       `json:"started_by"`
	Created   time.Time    `json:"created_at"`
	Updated   time.Time    `json:"updated_at"`
	Pending   []pendingRow `json:"pending"`
	Error     string       `json:"error,omitempty"`
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request, _ principal) *apiError {
	want := Status(r.URL.Query().Get("status"))
	s.mu.Lock()
	runs := slices.Clone(s.order)
	s.mu.Unlock()
	out := make([]summary, 0, len(runs))
	for _, ru := range runs {
		v := ru.view()
		if want != "" && v.Status != want {
			continue
		}
		out = append(out, summary{v.ID, v.Status, v.Prompt, v.Session, v.StartedBy, v.Created, v.Updated, v.Pending, v.Error})
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out})
	return nil
}

// decisionsRequest is the body of POST /v1/runs/{id}/decisions.
type decisionsRequest struct {
	Decisions []struct {
		CallID  string `json:"call_id"`
		Approve *bool  `json:"approve"`
		Reason  string `json:"reason"`
	} `json:"decisions"`
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request, p principal) *apiError {
	ru, e := s.lookup(r.PathValue("id"))
	if e != nil {
		return e
	}
	var req decisionsRequest
	if e := s.decode(w, r, &req); e != nil {
		return e
	}
	if len(req.Decisions) == 0 {
		return badRequest(`no decisions: give {"decisions": [{"call_id": "...", "approve": true|false, "reason": "..."}]}`)
	}
	ru.mu.Lock()
	defer ru.mu.Unlock()
	if ru.rec.Status != StatusAwaitingApproval {
		return &apiError{http.StatusConflict, "not_awaiting_approval", fmt.Sprintf("run %s is %s: only a run awaiting approval takes decisions", ru.rec.ID, ru.rec.Status)}
	}
	st := ru.state
	if st == nil {
		var err error
		if st, err = loop.LoadState(ru.statePath()); err != nil {
			return internalError(fmt.Errorf("run %s: its checkpoint: %w", ru.rec.ID, err))
		}
	}
	decidable := map[string]bool{}
	var ids []string
	for _, c := range st.DecidableCalls() {
		decidable[c.ID] = true
		ids = append(ids, c.ID)
	}
	var opts []loop.ResumeOption
	seen := map[string]bool{}
	for i, d := range req.Decisions {
		switch {
		case d.CallID == "":
			return badRequest("decision %d: no call_id", i+1)
		case d.Approve == nil:
			return badRequest("decision %d (%s): no \"approve\": say true or false", i+1, d.CallID)
		case !decidable[d.CallID]:
			return &apiError{http.StatusConflict, "not_pending", fmt.Sprintf("call %q is not pending in run %s (pending: %s)", d.CallID, ru.rec.ID, strings.Join(ids, ", "))}
		case seen[d.CallID]:
			return badRequest("call %q is decided twice", d.CallID)
		case len(d.Reason) > 4096:
			return badRequest("decision %d (%s): a reason of %d bytes, more than 4096", i+1, d.CallID, len(d.Reason))
		}
		seen[d.CallID] = true
		if *d.Approve {
			opts = append(opts, loop.Approve(d.CallID))
		} else {
			opts = append(opts, loop.Reject(d.CallID, d.Reason))
		}
	}
	// The audit log first: a decision that is acted on is a decision on
	// record.
	for _, d := range req.Decisions {
		if err := s.audit.write(auditEntry{Action: "decide", By: p.name, Run: ru.rec.ID, CallID: d.CallID, Approve: d.Approve, Reason: d.Reason}); err != nil {
			return internalError(err)
		}
		ru.events.add(Event{Type: "decision", CallID: d.CallID, Approve: d.Approve, Reason: d.Reason, By: p.name})
	}
	ru.state = nil
	ru.rec.Pending = []pendingRow{}
	ru.setStatusLocked(StatusRunning)
	ru.events.resume()
	s.launchLocked(ru, func(ctx context.Context, a *loop.Agent) iter.Seq2[loop.Event, error] {
		return a.StreamResume(ctx, st, opts...)
	})
	writeJSON(w, http.StatusAccepted, map[string]any{"id": ru.rec.ID, "status": StatusRunning})
	return nil
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request, p principal) *apiError {
	ru, e := s.lookup(r.PathValue("id"))
	if e != nil {
		return e
	}
	ru.mu.Lock()
	switch {
	case ru.rec.Status.ended():
		st := ru.rec.Status
		ru.mu.Unlock()
		return &apiError{http.StatusConflict, "ended", fmt.Sprintf("run %s already ended: %s", ru.rec.ID, st)}
	case ru.stop != nil:
		stop := ru.stop
		ru.mu.Unlock()
		if err := s.audit.write(auditEntry{Action: "cancel", By: p.name, Run: ru.rec.ID}); err != nil {
			return internalError(err)
		}
		stop(errCancelled)
	case ru.rec.Status != StatusAwaitingApproval:
		st := ru.rec.Status
		ru.mu.Unlock()
		return &apiError{http.StatusConflict, "not_cancellable", fmt.Sprintf("run %s is %s", ru.rec.ID, st)}
	default:
		// Paused: nothing runs; it ends here.
		if err := s.audit.write(auditEntry{Action: "cancel", By: p.name, Run: ru.rec.ID}); err != nil {
			ru.mu.Unlock()
			return internalError(err)
		}
		ru.state = nil
		ru.rec.Pending = []pendingRow{}
		ru.setStatusLocked(StatusCancelled)
		ru.events.end()
		ru.mu.Unlock()
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"id": ru.rec.ID})
	return nil
}

// loadRuns reads the runs of Dir: a run that was going is interrupted.
func (s *Server) loadRuns() error {
	err := loadRecords(s.runsDir, "run", "run.json", validRunID, func(name, dir string, b []byte) error {
		ru := &run{s: s, dir: dir}
		if err := json.Unmarshal(b, &ru.rec); err != nil || ru.rec.ID != name {
			s.note("run %s: its record %s is unreadable (%v): skipped, left as it is", name, filepath.Join(dir, "run.json"), err)
			return nil
		}
		events, err := openEventLog(dir, s.opts.MaxEvents)
		if err != nil {
			return fmt.Errorf("serve: run %s: %w", name, err)
		}
		ru.events = events
		ru.trace = &traceLog{dir: dir, max: s.opts.MaxEvents}
		if ru.rec.Pending == nil {
			ru.rec.Pending = []pendingRow{}
		}
		switch ru.rec.Status {
		case StatusRunning:
			ru.rec.Messages = ru.transcriptLocked()
			ru.setStatusLocked(StatusInterrupted)
			ru.events.end()
		case StatusAwaitingApproval:
			ru.events.pause()
		default:
			ru.events.end()
		}
		s.runs[ru.rec.ID] = ru
		s.order = append(s.order, ru)
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortStableFunc(s.order, func(a, b *run) int { return a.rec.Created.Compare(b.rec.Created) })
	return nil
}

// loadRecords calls load with the content of file in each subdirectory
// of dir whose name is valid: a directory without it was made and never
// saved, and is passed over. kind names the records in errors.
func loadRecords(dir, kind, file string, valid func(string) bool, load func(name, sub string, b []byte) error) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("serve: %ss directory: %w", kind, err)
	}
	for _, de := range ents {
		if !de.IsDir() || !valid(de.Name()) {
			continue
		}
		sub := filepath.Join(dir, de.Name())
		b, err := os.ReadFile(filepath.Join(sub, file))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("serve: %s %s: %w", kind, de.Name(), err)
		}
		if err := load(de.Name(), sub, b); err != nil {
			return err
		}
	}
	return nil
}
