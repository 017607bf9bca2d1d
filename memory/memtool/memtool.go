// Package memtool gives the model tools over a [memory.Memory]: recall
// (search what was remembered), remember (store a fact) and forget (erase
// facts described in plain language, after confirmation by default).
//
//	mem, _ := memory.NewFact(ctx, memory.FactOptions{Provider: p, Path: "ada.json"})
//	tools, err := memtool.All(mem, memtool.Options{})
//	if err != nil {
//		log.Fatal(err)
//	}
//	reg, _ := tool.NewRegistry(tools...)
//
// # Results
//
// Every tool answers with a JSON object the model reads (and the same
// object as structured content). A failure the model can act on (an empty
// query, a memory error, an id that was never proposed) is an error result,
// never a Go error: the run goes on. Output is bounded: each recalled
// message is cut to MaxPreviewChars, and k to MaxK.
//
// # Taint
//
// What a tainted run (one that has seen untrusted content) remembers is
// stored tainted: remember passes [memory.WithTaint] to the memory when
// [tool.Tainted] says the calling run is. A tool whose result shows the
// model a tainted fact or message (recall, remember, forget) reports it
// with [tool.ReportTaint]: the result is framed as data and the run
// reading it becomes tainted, in whatever later run or session it is read.
//
// # Forgetting safely
//
// By default forget is a two-step protocol. A call with an instruction is
// a dry run: it lists the facts that would be erased, erases nothing, and
// asks the model to get the user's confirmation. A second call with
// confirm_ids erases exactly those ids, and only ids the dry run proposed.
// A host that wants a human in the loop puts an approval policy on forget
// calls that carry confirm_ids. Options.ForgetImmediately skips the dry run.
package memtool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/tool"
)

// Defaults of [Options].
const (
	DefaultK               = 5
	DefaultMaxK            = 20
	DefaultMaxPreviewChars = 2000
	DefaultMaxFactChars    = 500
)

// Options configures the memory tools. The zero value gives tools named
// recall, remember and forget with the defaults below.
type Options struct {
	// RecallName, RememberName and ForgetName rename the tools.
	RecallName, RememberName, ForgetName string
	// DefaultK is how many matches recall returns when the model does not
	// say (default 5); MaxK caps what it may ask for (default 20).
	DefaultK, MaxK int
	// MaxPreviewChars cuts each recalled message (default 2000 runes).
	MaxPreviewChars int
	// MaxFactChars refuses longer facts in remember (default 500 runes):
	// a fact is a sentence, not a document.
	MaxFactChars int
	// Source is the provenance of facts stored with remember (default
	// memory.SourceAgent: the model decided to store them).
	Source memory.Source
	// ForgetImmediately makes forget erase at once, without the dry run.
	ForgetImmediately bool
	// Redact, when set, is applied to every text a tool returns (for
	// example a secret filter shared with tracing).
	Redact func(string) string
}

func (o *Options) fill() error {
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&o.RecallName, "recall")
	def(&o.RememberName, "remember")
	def(&o.ForgetName, "forget")
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"DefaultK", &o.DefaultK, DefaultK}, {"MaxK", &o.MaxK, DefaultMaxK}, {"MaxPreviewChars", &o.MaxPreviewChars, DefaultMaxPreviewChars}, {"MaxFactChars", &o.MaxFactChars, DefaultMaxFactChars}} {
		if *f.v < 0 {
			return fmt.Errorf("memtool: Options.%s is %d; want a positive number (or 0 for %d)", f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if o.DefaultK > o.MaxK {
		return fmt.Errorf("memtool: Options.DefaultK (%d) is above MaxK (%d)", o.DefaultK, o.MaxK)
	}
	if o.Source == "" {
		o.Source = memory.SourceAgent
	}
	if !o.Source.Valid() {
		return fmt.Errorf("memtool: Options.Source %q is not a known source", o.Source)
	}
	if o.Redact == nil {
		o.Redact = func(s string) string { return s }
	}
	return nil
}

// All returns the tools m supports: recall always, remember when m is a
// [memory.Rememberer], forget when it is a [memory.Forgetter].
func All(m memory.Memory, opts Options) ([]tool.Tool, error) {
	r, err := Recall(m, opts)
	if err != nil {
		return nil, err
	}
	tools := []tool.Tool{r}
	if rm, ok := m.(memory.Rememberer); ok {
		t, err := Remember(rm, opts)
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	if fg, ok := m.(memory.Forgetter); ok {
		t, err := Forget(fg, opts)
		if err != nil {
			return nil, err
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// RecallInput is the recall tool's arguments.
type RecallInput struct {
	Query string `json:"query" jsonschema:"what to look for in memory: names, topics, keywords"`
	K     int    `json:"k,omitempty" jsonschema:"how many matches to return at most"`
}

// Match is one recalled message.
type Match struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// Truncated reports that Content was cut to the preview length.
	Truncated bool `json:"truncated,omitempty"`
}

// RecallOutput is the recall tool's result.
type RecallOutput struct {
	Matches []Match `json:"matches"`
}

// Recall returns the recall tool over m.
func Recall(m memory.Memory, opts Options) (tool.Tool, error) {
	if m == nil {
		return nil, errors.New("memtool: Recall needs a memory")
	}
	if err := opts.fill(); err != nil {
		return nil, err
	}
	t, err := tool.New(opts.RecallName,
		"Search your long-term memory (facts and earlier conversations) for what is relevant to a query. Use it before answering questions about the user or about earlier sessions.",
		func(ctx context.Context, in RecallInput) (RecallOutput, error) {
			q := strings.TrimSpace(in.Query)
			if q == "" {
				return RecallOutput{}, errors.New("query is empty: say what to look for")
			}
			k := in.K
			if k <= 0 {
				k = opts.DefaultK
			}
			k = min(k, opts.MaxK)
			msgs, err := m.Recall(ctx, q, k)
			if err != nil {
				return RecallOutput{}, fmt.Errorf("recall failed: %w", err)
			}
			out := RecallOutput{Matches: make([]Match, 0, len(msgs))}
			for _, msg := range msgs[:min(len(msgs), k)] {
				if memory.IsTainted(msg) {
					tool.ReportTaint(ctx)
				}
				text, cut := preview(opts.Redact(msg.Text()), opts.MaxPreviewChars)
				out.Matches = append(out.Matches, Match{Role: string(msg.Role), Content: text, Truncated: cut})
			}
			return out, nil
		})
	if err != nil {
		return nil, err
	}
	return tool.WithFlags(t, tool.Flags{Idempotent: true, Permissions: []string{"memory.read"}}), nil
}

// RememberInput is the remember tool's arguments.
type RememberInput struct {
	Fact    string `json:"fact" jsonschema:"one short, self-contained sentence to remember"`
	Subject string `json:"subject,omitempty" jsonschema:"who or what the fact is about, e.g. user"`
}

// StoredFact is a fact as the tools show it.
type StoredFact struct {
	ID      int64  `json:"id"`
	Fact    string `json:"fact"`
	Subject string `json:"subject,omitempty"`
	Source  string `json:"source,omitempty"`
	// Tainted marks a fact learnt from untrusted content.
	Tainted bool `json:"tainted,omitempty"`
}

// RememberOutput is the remember tool's result.
type RememberOutput struct {
	Stored bool       `json:"stored"`
	Fact   StoredFact `json:"fact"`
}

// Remember returns the remember tool over r.
func Remember(r memory.Rememberer, opts Options) (tool.Tool, error) {
	if r == nil {
		return nil, errors.New("memtool: Remember needs a memory")
	}
	if err := opts.fill(); err != nil {
		return nil, err
	}
	t, err := tool.New(opts.RememberName,
		"Store a durable fact about the user or their circumstances in long-term memory, so it is known in later conversations. One fact per call.",
		func(ctx context.Context, in RememberInput) (RememberOutput, error) {
			if n := utf8.RuneCountInString(in.Fact); n > opts.MaxFactChars {
				return RememberOutput{}, fmt.Errorf("the fact is %d characters long; keep it under %d (one sentence)", n, opts.MaxFactChars)
			}
			if tool.Tainted(ctx) {
				ctx = memory.WithTaint(ctx)
			}
			rec, err := r.Remember(ctx, in.Fact, in.Subject, opts.Source)
			if err != nil {
				return RememberOutput{}, err
			}
			return RememberOutput{Stored: true, Fact: shown(ctx, rec, opts)}, nil
		})
	if err != nil {
		return nil, err
	}
	return tool.WithFlags(t, tool.Flags{Permissions: []string{"memory.write"}}), nil
}

// shown is r as a tool's result shows it; a tainted fact taints the
// result.
func shown(ctx context.Context, r memory.Record, opts Options) StoredFact {
	text, _ := preview(opts.Redact(r.Text), opts.MaxFactChars)
	if r.Tainted {
		tool.ReportTaint(ctx)
	}
	return StoredFact{ID: r.ID, Fact: text, Subject: r.Subject, Source: string(r.Source), Tainted: r.Tainted}
}

// preview cuts s to n runes.
func preview(s string, n int) (string, bool) {
	if utf8.RuneCountInString(s) <= n {
		return s, false
	}
	r := []rune(s)
	return string(r[:n]) + "…", true
}

// pendingSet remembers the ids a dry run proposed, so a confirmation can
// only erase what the user was shown. Bounded: the oldest proposals are
// forgotten first.
type pendingSet struct {
	mu    sync.Mutex
	facts map[int64]StoredFact // proposed by a dry run, as it showed them
	order []int64
}

const maxPending = 256

func (p *pendingSet) add(facts []StoredFact) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.facts == nil {
		p.facts = make(map[int64]StoredFact)
	}
	for _, f := range facts {
		if _, ok := p.facts[f.ID]; !ok {
			p.order = append(p.order, f.ID)
		}
		p.facts[f.ID] = f
	}
	for len(p.order) > maxPending {
		delete(p.facts, p.order[0])
		p.order = p.order[1:]
	}
}

// take removes ids from the set and returns the facts as the dry run
// showed them; it fails, removing nothing, when one was not proposed.
func (p *pendingSet) take(ids []int64) ([]StoredFact, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, id := range ids {
		if _, ok := p.facts[id]; !ok {
			return nil, fmt.Errorf("fact %d was not proposed by a dry run of this tool; call it without confirm_ids first and show the user what would be erased", id)
		}
	}
	out := make([]StoredFact, len(ids))
	for i, id := range ids {
		out[i] = p.facts[id]
		delete(p.facts, id)
	}
	return out, nil
}
