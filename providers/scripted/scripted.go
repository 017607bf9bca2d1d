package scripted

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/llm"
)

// ErrExhausted is wrapped by the error a call returns when the script has no
// turn left to play.
var ErrExhausted = errors.New("scripted: script exhausted")

// Options configures a [Provider]. The zero value works.
type Options struct {
	// ChunkSize is the number of runes per streamed text delta; 0 means 12.
	ChunkSize int
	// ChunkDelay is waited between streamed deltas (for demos that show
	// streaming); 0 means none. Cancelling ctx ends the wait.
	ChunkDelay time.Duration
	// Model is the model name responses report; "" means "scripted".
	Model string
	// PerConversation chooses each turn by the number of assistant messages
	// in the request instead of by call order, so one Provider serves many
	// concurrent runs of the same script.
	PerConversation bool
	// ForgetRequests keeps no request (Requests returns none; Calls still
	// counts them): for a provider that serves a long suite of runs, such
	// as `autoagent eval`'s, which would otherwise hold every transcript
	// of every run until it ends.
	ForgetRequests bool
}

// Provider plays a script. Build it with [New], [NewWithOptions], [Load] or
// [Parse]. It is safe for concurrent use.
type Provider struct {
	opts  Options
	turns []Turn

	mu       sync.Mutex
	next     int
	calls    int
	requests []*llm.Request
}

var _ llm.Provider = (*Provider)(nil)

// New returns a provider playing turns in order with default options.
func New(turns ...Turn) *Provider { return NewWithOptions(Options{}, turns...) }

// NewWithOptions returns a provider playing turns with opts.
func NewWithOptions(opts Options, turns ...Turn) *Provider {
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = 12
	}
	if opts.Model == "" {
		opts.Model = "scripted"
	}
	return &Provider{opts: opts, turns: slices.Clone(turns)}
}

// Name returns "scripted".
func (p *Provider) Name() string { return "scripted" }

// Turns returns the number of turns in the script.
func (p *Provider) Turns() int { return len(p.turns) }

// Requests returns the requests received so far, in order, as shallow
// copies (see the package doc).
func (p *Provider) Requests() []*llm.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// Calls returns the number of calls received so far.
func (p *Provider) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// Remaining returns the number of turns not played yet (sequential mode).
func (p *Provider) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.turns) - p.next
}

// Reset rewinds the script and forgets the recorded requests.
func (p *Provider) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.next, p.calls = 0, 0
	p.requests = nil
}

// take records req and returns the turn that answers it, once its Check
// (if any) accepts the request.
func (p *Provider) take(ctx context.Context, req *llm.Request) (*Turn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.calls++
	if !p.opts.ForgetRequests {
		cp := *req
		cp.Messages = slices.Clip(req.Messages)
		cp.Tools = slices.Clip(req.Tools)
		p.requests = append(p.requests, &cp)
	}
	call := p.calls
	var i int
	if p.opts.PerConversation {
		for _, m := range req.Messages {
			if m.Role == llm.RoleAssistant {
				i++
			}
		}
	} else {
		i = p.next
		if i < len(p.turns) {
			p.next++
		}
	}
	p.mu.Unlock()
	if i >= len(p.turns) {
		return nil, fmt.Errorf("%w: call %d asked for turn %d but the script has %d turn(s)%s",
			ErrExhausted, call, i+1, len(p.turns), lastUserHint(req))
	}
	t := &p.turns[i]
	if t.Check != nil {
		if err := t.Check(ctx, req); err != nil {
			return nil, fmt.Errorf("scripted: turn %d: check failed: %w", i+1, err)
		}
	}
	return t, nil
}

// lastUserHint quotes the start of the last user message, which is what a
// test author needs to see to know where the script ran short.
func lastUserHint(req *llm.Request) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != llm.RoleUser && m.Role != llm.RoleTool {
			continue
		}
		s := m.Text()
		if m.Role == llm.RoleTool {
			for _, r := range m.ToolResults() {
				s = r.Name + " → " + r.Content
			}
		}
		if r := []rune(s); len(r) > 80 {
			s = string(r[:80]) + "…"
		}
		return fmt.Sprintf(" (last %s message: %q)", m.Role, s)
	}
	return ""
}

// Complete plays the next turn.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	t, err := p.take(ctx, req)
	if err != nil {
		return nil, err
	}
	if t.Err != nil {
		return nil, t.Err
	}
	return t.response(p.opts.Model), nil
}

// Stream plays the next turn as a stream: text deltas, reasoning deltas,
// each tool call, done.
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		t, err := p.take(ctx, req)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		if t.Err != nil && !t.MidStream {
			yield(llm.StreamEvent{}, t.Err)
			return
		}
		if !p.chunks(ctx, llm.StreamReasoning, t.Reasoning, yield) || !p.chunks(ctx, llm.StreamText, t.Text, yield) {
			return
		}
		if t.Err != nil {
			yield(llm.StreamEvent{}, t.Err)
			return
		}
		resp := t.response(p.opts.Model)
		for _, c := range resp.Message.ToolCalls() {
			if !yield(llm.StreamEvent{Type: llm.StreamToolCall, ToolCall: &c}, nil) {
				return
			}
		}
		yield(llm.StreamEvent{Type: llm.StreamDone, Response: resp}, nil)
	}
}

// chunks yields s in deltas of ChunkSize runes and reports whether the
// consumer wants more.
func (p *Provider) chunks(ctx context.Context, typ llm.StreamEventType, s string, yield func(llm.StreamEvent, error) bool) bool {
	for s != "" {
		end, runes := 0, 0
		for end < len(s) && runes < p.opts.ChunkSize {
			_, size := utf8.DecodeRuneInString(s[end:])
			end += size
			runes++
		}
		if p.opts.ChunkDelay > 0 {
			timer := time.NewTimer(p.opts.ChunkDelay)
			select {
			case <-ctx.Done():
				timer.Stop()
				yield(llm.StreamEvent{}, ctx.Err())
				return false
			case <-timer.C:
			}
		}
		if !yield(llm.StreamEvent{Type: typ, Text: s[:end]}, nil) {
			return false
		}
		s = s[end:]
	}
	return true
}
