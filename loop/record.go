package loop

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
	"github.com/autoagent-go/autoagent/trace"
)

// RecordOptions configures a [Recorder]. The zero value works.
type RecordOptions struct {
	// KeepSecrets writes prompts, responses and results as they are. By
	// default every string is redacted (see trace.Redact) so a recording
	// can be committed as a regression test; a replay of a redacted
	// recording reproduces the redacted run.
	KeepSecrets bool
}

// Recorder writes what a run did to JSONL: a "run" line with the starting
// state, the tool specs and flags and the bounds; an "llm" line per model
// response (with digests of the request that produced it); a "tool" line
// per executed call; an "end" line with the outcome. [Replay] plays it back.
//
// Set it as [Agent.Recorder]. One Recorder may serve several runs (a
// parent and its sub-agents, concurrent runs); lines carry the run id. It is
// safe for concurrent use, writes one line per Write call, and never fails a
// run: the first write error is kept for [Recorder.Err].
type Recorder struct {
	mu     sync.Mutex
	w      io.Writer
	c      io.Closer
	seq    int
	redact bool
	err    error
}

// NewRecorder returns a recorder writing to w.
func NewRecorder(w io.Writer, opts RecordOptions) *Recorder {
	return &Recorder{w: w, redact: !opts.KeepSecrets}
}

// CreateRecording returns a recorder writing to the file at path, created
// or truncated, mode 0600. Close closes the file.
func CreateRecording(path string, opts RecordOptions) (*Recorder, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("loop: %w", err)
	}
	r := NewRecorder(f, opts)
	r.c = f
	return r, nil
}

// Err returns the first write error.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Close closes the file of CreateRecording and returns the first error.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var cerr error
	if r.c != nil {
		cerr = r.c.Close()
		r.c = nil
	}
	return errors.Join(r.err, cerr)
}

// recordedTool is a tool as the recording knows it.
type recordedTool struct {
	Spec  llm.ToolSpec `json:"spec"`
	Flags tool.Flags   `json:"flags,omitzero"`
}

// recordedResult is a tool's output before the loop bounds and frames it.
type recordedResult struct {
	Content        string `json:"content"`
	IsError        bool   `json:"is_error,omitempty"`
	Infrastructure bool   `json:"infrastructure,omitempty"`
	Untrusted      bool   `json:"untrusted,omitempty"`
	// Refusal is the kind of a refusal the loop wrote in the tool's place
	// (a timeout); see package loop/refusal.
	Refusal string `json:"refusal,omitempty"`
}

// recordLine is one line of a recording; Kind says which fields are set.
type recordLine struct {
	Kind  string `json:"kind"` // run, llm, tool, end
	Seq   int    `json:"seq"`
	RunID string `json:"run_id"`
	Step  int    `json:"step,omitempty"`

	// run
	State    *RunState      `json:"state,omitempty"`
	Tools    []recordedTool `json:"tools,omitempty"`
	Bounds   *Bounds        `json:"bounds,omitempty"`
	Model    string         `json:"model,omitempty"`
	Redacted bool           `json:"redacted,omitempty"`
	// CodeMode is the run's code mode and its program call bound, when on.
	CodeMode *recordedCodeMode `json:"code_mode,omitempty"`

	// llm
	Messages       int           `json:"messages,omitempty"`
	ToolNames      []string      `json:"tool_names,omitempty"`
	MessageDigests []string      `json:"message_digests,omitempty"`
	Response       *llm.Response `json:"response,omitempty"`
	// Retrieved is the block of retrieved passages the call was sent
	// (Agent.Knowledge.Retrieval), which a replay sends again; RetrievedUntrusted
	// says it held untrusted passages.
	Retrieved          string `json:"retrieved,omitempty"`
	RetrievedUntrusted bool   `json:"retrieved_untrusted,omitempty"`

	// tool
	CallID    string          `json:"call_id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    *recordedResult `json:"result,omitempty"`

	// end
	StopReason       StopReason `json:"stop_reason,omitempty"`
	Steps            int        `json:"steps,omitempty"`
	Output           string     `json:"output,omitempty"`
	Usage            *llm.Usage `json:"usage,omitempty"`
	TranscriptDigest string     `json:"transcript_digest,omitempty"`
	Error            string     `json:"error,omitempty"`
}

func (r *Recorder) write(l *recordLine) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	r.seq++
	l.Seq = r.seq
	b, err := json.Marshal(l)
	if err == nil {
		_, err = r.w.Write(append(b, '\n'))
	}
	if err != nil {
		r.err = fmt.Errorf("loop: recording: %w", err)
	}
}

// start records the run's starting point.
// recordedCodeMode is a recorded run's code mode (Agent.CodeMode without
// its runner).
type recordedCodeMode struct {
	Mode     codemode.Mode `json:"mode"`
	MaxCalls int           `json:"max_calls,omitempty"`
}

func (r *Recorder) start(run *runner) {
	st := run.st.Clone()
	st.Status = ""
	if r.redact {
		for i := range st.Messages {
			st.Messages[i] = trace.RedactMessage(st.Messages[i])
		}
	}
	l := &recordLine{Kind: "run", RunID: st.RunID, Step: st.Step, State: st, Model: run.a.Model, Redacted: r.redact}
	b := run.a.Bounds
	l.Bounds = &b
	if cm := run.a.CodeMode; cm.Mode != codemode.Off {
		l.CodeMode = &recordedCodeMode{Mode: cm.Mode, MaxCalls: cm.MaxCalls}
	}
	if run.a.Tools != nil {
		for _, t := range run.a.Tools.Tools() {
			l.Tools = append(l.Tools, recordedTool{Spec: t.Spec(), Flags: tool.FlagsOf(t)})
		}
	}
	r.write(l)
}

func (r *Recorder) llm(run *runner, step int, req *llm.Request, resp *llm.Response) {
	cp := *resp
	cp.Message = resp.Message.Clone()
	if r.redact {
		cp.Message = trace.RedactMessage(cp.Message)
	}
	block := run.blockText
	if r.redact {
		block = trace.Redact(block)
	}
	r.write(&recordLine{Kind: "llm", RunID: run.st.RunID, Step: step, Messages: len(req.Messages),
		ToolNames: toolNames(req.Tools), MessageDigests: messageDigests(req.Messages, r.redact), Response: &cp,
		Retrieved: block, RetrievedUntrusted: run.blockUntrusted})
}

func (r *Recorder) tool(run *runner, step int, c llm.ToolCall, raw rawResult) {
	args, content := c.Arguments, raw.text
	if r.redact {
		args, content = trace.RedactJSON(args), trace.Redact(content)
	}
	r.write(&recordLine{Kind: "tool", RunID: run.st.RunID, Step: step, CallID: c.ID, Name: c.Name, Arguments: args,
		Result: &recordedResult{Content: content, IsError: raw.isError, Infrastructure: raw.infra, Untrusted: raw.untrusted, Refusal: string(raw.refusal)}})
}

func (r *Recorder) end(run *runner, res *Result, err error) {
	l := &recordLine{Kind: "end", RunID: run.st.RunID, Step: run.st.Step, Steps: run.st.Step}
	if res != nil {
		l.StopReason, l.Output = res.StopReason, res.Output
		if r.redact {
			l.Output = trace.Redact(l.Output)
		}
		u := res.Usage
		l.Usage = &u
		l.TranscriptDigest = transcriptDigest(res.Messages, r.redact)
	}
	if err != nil {
		l.Error = err.Error()
		if r.redact {
			l.Error = trace.Redact(l.Error)
		}
	}
	r.write(l)
}

func toolNames(specs []llm.ToolSpec) []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// messageDigest identifies a message's content (redacted first when the
// recording is), so a replay can say which message diverged.
func messageDigest(m llm.Message, redact bool) string {
	if redact {
		m = trace.RedactMessage(m)
	}
	b, _ := json.Marshal(m)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func messageDigests(msgs []llm.Message, redact bool) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = messageDigest(m, redact)
	}
	return out
}

func transcriptDigest(msgs []llm.Message, redact bool) string {
	h := sha256.New()
	for _, m := range msgs {
		h.Write([]byte(messageDigest(m, redact)))
	}
	return hex.EncodeToString(h.Sum(nil))
}
