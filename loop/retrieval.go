package loop

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/retrieve"
	"github.com/autoagent-go/autoagent/trace"
)

// The defaults of [Retrieval].
const (
	DefaultRetrieveK        = 8
	DefaultRetrieveShare    = 0.1
	DefaultRetrieveMaxBytes = 16 << 10
)

// bytesPerToken converts the block's share of the context budget, in
// tokens, to the bytes the block may take. Three is below the four bytes
// a token of English text averages, so the bound errs on the small side;
// text of other scripts takes more bytes a token still.
const bytesPerToken = 3

// Retrieval is the retrieval stage: before each model call, the
// Retriever is asked for passages relevant to the current question (the
// text of the last user message), and those not already in what the model
// is sent are put before the question in one block (retrieve.Block),
// bounded by Share of the context budget and by MaxBytes. The block is in
// what the model is sent only: the transcript, checkpoints and sessions
// never hold it. A passage marked untrusted is framed as data, and the
// run becomes tainted. Retrieval runs again only when the question
// changes. A failing retriever never fails the run: the call goes on
// without a block, and the error is traced (retrieved).
type Retrieval struct {
	// Retriever finds the passages (package retrieve); nil turns the
	// stage off.
	Retriever retrieve.Retriever
	// K is how many passages are asked for; 0 means DefaultRetrieveK.
	K int
	// Share is the block's part of the context budget (Bounds'
	// ContextShare of the model's context window), in (0, 1]; 0 means
	// DefaultRetrieveShare. A token counts as 3 bytes.
	Share float64
	// MaxBytes bounds the block whatever the window; 0 means
	// DefaultRetrieveMaxBytes. With no known window it is the bound.
	MaxBytes int
}

// Validate reports the first invalid field.
func (rc Retrieval) Validate() error {
	switch {
	case rc.K < 0:
		return fmt.Errorf("loop: retrieval: K is %d; want 0 (default %d) or more", rc.K, DefaultRetrieveK)
	case rc.Share < 0 || rc.Share > 1:
		return fmt.Errorf("loop: retrieval: Share is %v; want 0 (default %v) up to 1", rc.Share, DefaultRetrieveShare)
	case rc.MaxBytes < 0:
		return fmt.Errorf("loop: retrieval: MaxBytes is %d; want 0 (default %d) or more", rc.MaxBytes, DefaultRetrieveMaxBytes)
	}
	return nil
}

// retrieved is what the run last retrieved, for the question it was
// retrieved for.
type retrieved struct {
	done  bool
	query string
	found []retrieve.Passage
	err   error
}

// blockBytes is the bound of the block for the next model call.
func (r *runner) blockBytes() int {
	rc := r.a.Retrieval
	limit := cmp.Or(rc.MaxBytes, DefaultRetrieveMaxBytes)
	window := r.b.ContextWindow
	if window == 0 {
		window = ContextWindowFor(cmp.Or(r.a.Model, r.lastModel))
	}
	if window > 0 {
		share := cmp.Or(rc.Share, DefaultRetrieveShare)
		limit = min(limit, int(float64(window)*r.b.ContextShare*share*bytesPerToken))
	}
	return limit
}

// retrieval puts the block of passages for the current question into
// view, before the question, and returns the new view with what to trace
// (nil without a retriever or a question).
func (r *runner) retrieval(step int, view []llm.Message) ([]llm.Message, *trace.Memory) {
	rc := r.a.Retrieval
	if rc.Retriever == nil && r.replay == nil {
		return view, nil
	}
	qi := -1
	for i := len(view) - 1; i >= 0; i-- {
		if view[i].Role == llm.RoleUser {
			qi = i
			break
		}
	}
	if qi < 0 || strings.TrimSpace(view[qi].Text()) == "" {
		return view, nil
	}
	q := view[qi].Text()
	var text string
	var untrusted bool
	p := &trace.Memory{Step: step, Query: r.preview(q)}
	if r.replay != nil {
		// A replay sends the block the recording sent: the documents
		// may have changed since, and the replay checks the requests.
		if text, untrusted = r.replay.block(); text == "" {
			return view, nil
		}
	} else {
		if !r.retr.done || r.retr.query != q {
			var ps []retrieve.Passage
			err := protect("retriever", func() (err error) {
				ps, err = rc.Retriever.Retrieve(r.ctx, q, cmp.Or(rc.K, DefaultRetrieveK))
				return err
			})
			r.retr = retrieved{done: true, query: q, found: ps, err: err}
		}
		if r.retr.err != nil {
			p.Error = r.retr.err.Error()
		}
		p.Limit = r.blockBytes()
		// What the model is sent already is not repeated.
		fresh := make([]retrieve.Passage, 0, len(r.retr.found))
		for _, ps := range r.retr.found {
			if strings.TrimSpace(ps.Text) == "" || inView(view, ps.Text) {
				p.Pruned++
				continue
			}
			fresh = append(fresh, ps)
		}
		var shown []retrieve.Passage
		text, shown = retrieve.Block(fresh, p.Limit)
		p.Pruned += len(fresh) - len(shown)
		p.Kept = len(shown)
		for _, s := range shown {
			src := s.Source + " " + strconv.Itoa(len(s.Text)) + "B"
			if s.Untrusted {
				src += " untrusted"
				untrusted = true
			}
			p.Sources = append(p.Sources, src)
		}
		if text == "" {
			return view, p
		}
	}
	p.Bytes = len(text)
	out := make([]llm.Message, 0, len(view)+1)
	out = append(out, view[:qi]...)
	out = append(out, llm.UserText(text))
	out = append(out, view[qi:]...)
	r.blockText, r.blockUntrusted = text, untrusted
	if untrusted && !r.st.Tainted {
		r.st.Tainted = true
		r.taint.Store(true)
		traceEvent(r, trace.Tainted, r.runSpan, trace.ToolCall{Step: step, Name: "retrieval"})
	}
	return out, p
}

// inView reports whether a message of view holds text already.
func inView(view []llm.Message, text string) bool {
	for _, m := range view {
		if strings.Contains(m.Text(), text) {
			return true
		}
		for _, res := range m.ToolResults() {
			if strings.Contains(res.Content, text) {
				return true
			}
		}
	}
	return false
}
