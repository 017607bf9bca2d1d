package loop

import (
	"cmp"
	"strconv"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/retrieve"
	"github.com/autoagent-go/autoagent/trace"
)

// bytesPerToken converts the block's share of the context budget, in
// tokens, to the bytes the block may take. Three is below the four bytes
// a token of English text averages, so the bound errs on the small side;
// text of other scripts takes more bytes a token still.
const bytesPerToken = 3

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
	rc := r.a.Knowledge.Retrieval
	limit := cmp.Or(rc.MaxBytes, retrieve.DefaultMaxBytes)
	window := r.b.ContextWindow
	if window == 0 {
		window = ContextWindowFor(cmp.Or(r.a.Model, r.lastModel))
	}
	if window > 0 {
		share := cmp.Or(rc.Share, retrieve.DefaultShare)
		limit = min(limit, int(float64(window)*r.b.ContextShare*share*bytesPerToken))
	}
	return limit
}

// retrieval puts the block of passages for the current question into
// view, before the question, and returns the new view with what to trace
// (nil without a retriever or a question).
func (r *runner) retrieval(step int, view []llm.Message) ([]llm.Message, *trace.Memory) {
	rc := r.a.Knowledge.Retrieval
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
				ps, err = rc.Retriever.Retrieve(r.ctx, q, cmp.Or(rc.K, retrieve.DefaultK))
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

// inView reports whether the text of a message of view (tool results
// aside: the loop reads no result's text) holds text already.
func inView(view []llm.Message, text string) bool {
	for _, m := range view {
		if strings.Contains(m.Text(), text) {
			return true
		}
	}
	return false
}
