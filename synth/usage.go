package synth

import (
	"context"
	"sync"

	"github.com/autoagent-go/autoagent/llm"
)

// usageAcc sums the writer's usage over a Synthesize call and keeps the
// writer's last answer, which the next attempt's conversation repeats.
type usageAcc struct {
	mu   sync.Mutex
	u    llm.Usage
	have bool
	last *llm.Message
}

func (a *usageAcc) answered(m llm.Message) {
	a.mu.Lock()
	a.last = &m
	a.mu.Unlock()
}

// takeAnswer returns and clears the last answer.
func (a *usageAcc) takeAnswer() *llm.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.last
	a.last = nil
	return m
}

func (a *usageAcc) add(u llm.Usage) {
	a.mu.Lock()
	a.u, a.have = a.u.Add(u), true
	a.mu.Unlock()
}

// total returns the sum, nil when no call reported usage (usage is never
// invented).
func (a *usageAcc) total() *llm.Usage {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.have {
		return nil
	}
	u := a.u
	return &u
}

type usageKey struct{}

func withUsage(ctx context.Context, a *usageAcc) context.Context {
	return context.WithValue(ctx, usageKey{}, a)
}

func usageFrom(ctx context.Context) *usageAcc {
	a, _ := ctx.Value(usageKey{}).(*usageAcc)
	return a
}
