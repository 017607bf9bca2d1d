package loop

import (
	"sync"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop/refusal"
)

// loopGuard counts how often each (tool, arguments) pair has been asked
// for in the run, so a model stuck repeating a call is refused. Counts are
// derived from the transcript, so they survive resume; they grow as turns
// are appended.
type loopGuard struct {
	max    int
	mu     sync.Mutex // tools screening nested calls read while a turn is observed
	counts map[string]int
}

func newLoopGuard(max int, msgs []llm.Message) *loopGuard {
	if max <= 0 {
		return nil
	}
	g := &loopGuard{max: max, counts: map[string]int{}}
	for _, m := range msgs {
		if m.Role == llm.RoleAssistant {
			g.observe(m.ToolCalls())
		}
	}
	return g
}

// observe counts the calls of a turn (before the guard judges them, so two
// identical calls in one turn both count).
func (g *loopGuard) observe(calls []llm.ToolCall) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range calls {
		g.counts[callSignature(c)]++
	}
}

// check returns the number of times c's signature was asked for, plus
// extra asks not observed yet, and whether that is more than allowed.
func (g *loopGuard) check(c llm.ToolCall, extra int) (int, bool) {
	sig := callSignature(c)
	g.mu.Lock()
	n := g.counts[sig] + extra
	g.mu.Unlock()
	return n, n > g.max
}

// callSignature is name(canonical JSON arguments): key order and spacing
// do not make two calls different.
func callSignature(c llm.ToolCall) string {
	return c.Name + "(" + canonicalJSON(c.Arguments) + ")"
}

func repeatedCallMessage(name string, max int) refusal.Refusal {
	return refusal.New(refusal.RepeatedCall, "you already called `%s` with these exact arguments %d times and it was not run again. Change the arguments, use a different tool, or stop and report what you have.", name, max)
}
