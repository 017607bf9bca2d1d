package host

import (
	"context"
	"strconv"
	"sync/atomic"
)

// A call tree is a sandboxed call and the sandboxed calls it makes, one
// inside the other, through tools: grants (the guest's tool_call reaches
// the application's dispatcher, which may call another module's tool with
// the context it was given). The tree bounds how deeply they nest
// (Limits.CallDepth) and how much memory their instances hold together
// (Limits.CallTreeMemory), so a module granted a tool that leads back to
// itself cannot multiply its limits.
type callTree struct {
	limit int64 // CallTreeMemory of the outermost call's module
	mem   atomic.Int64
}

// callNode is one call of a tree, in the context of the calls it makes.
type callNode struct {
	tree  *callTree
	depth int // 1 for the outermost call
}

type callNodeKey struct{}

// parentNode returns the call a new sandboxed call nests in, from its
// context (see instance.toolCall), or nil for an outermost call; it fails
// with a LimitError when the new call would nest deeper than limits allow.
func parentNode(ctx context.Context, limits Limits) (*callNode, error) {
	parent, _ := ctx.Value(callNodeKey{}).(*callNode)
	if parent != nil && parent.depth+1 > limits.CallDepth {
		return nil, &LimitError{Limit: LimitCallDepth, Value: strconv.Itoa(limits.CallDepth)}
	}
	return parent, nil
}

// charge adds n bytes to the tree, reporting false (and adding nothing)
// when that would pass its limit.
func (t *callTree) charge(n int64) bool {
	for {
		cur := t.mem.Load()
		if n > 0 && cur+n > t.limit {
			return false
		}
		if t.mem.CompareAndSwap(cur, cur+n) {
			return true
		}
	}
}
