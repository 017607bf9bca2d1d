package tool

import "context"

// TaintScope is the taint of the call a tool runs for, as its context
// carries it. The agent loop puts one in every tool call's context: a
// tool (or a store it writes through) asks whether untrusted content
// reached the caller, and marks its own result untrusted.
//
// Taint is a property of data: what a tainted caller writes (a memory
// fact, a kv value, a sub-agent's run) stays untrusted when read back,
// whoever reads it. Implementations must be safe for concurrent use.
type TaintScope interface {
	// Tainted reports whether untrusted content reached the caller: its
	// run was tainted, or the call took some in so far (a result of an
	// untrusted tool it called).
	Tainted() bool
	// Taint marks the running call's result as untrusted: it is framed as
	// data and taints the run, as if the tool were flagged Untrusted.
	Taint()
}

// TaintKey is the context key a TaintScope is found under. Contexts of
// types of their own (the loop's, which allocate nothing per call) answer
// Value(TaintKey{}) with their scope; others use [WithTaintScope].
type TaintKey struct{}

// WithTaintScope returns ctx carrying s.
func WithTaintScope(ctx context.Context, s TaintScope) context.Context {
	return context.WithValue(ctx, TaintKey{}, s)
}

// TaintScopeFrom returns the scope ctx carries, if any.
func TaintScopeFrom(ctx context.Context) (TaintScope, bool) {
	s, ok := ctx.Value(TaintKey{}).(TaintScope)
	return s, ok && s != nil
}

// Tainted reports whether the caller running with ctx has seen untrusted
// content. A context with no scope is not tainted: code outside an agent
// run decides its trust itself.
func Tainted(ctx context.Context) bool {
	s, ok := TaintScopeFrom(ctx)
	return ok && s.Tainted()
}

// ReportTaint marks the result of the call running with ctx as untrusted
// (see [TaintScope.Taint]). A sub-agent whose run was tainted reports it,
// so delegation never launders taint. It reports false when ctx carries
// no scope.
func ReportTaint(ctx context.Context) bool {
	s, ok := TaintScopeFrom(ctx)
	if ok {
		s.Taint()
	}
	return ok
}
