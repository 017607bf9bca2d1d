// Package hostcalltest is a [hostcall.Call] without WebAssembly, for
// testing a capability's functions on their own: blocks are byte slices
// in a map, and a call that ends unwinds to [Call.Run], which reports how.
//
//	c := hostcalltest.New(manifest.DefaultLimits())
//	end := c.Run(func() { s[0] = get(c, c.Block("notes"), c.Block("k")) })
//	if end.Kind != hostcalltest.Denied { … }
package hostcalltest

import (
	"context"
	"fmt"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
	"github.com/autoagent-go/autoagent/manifest"
)

// EndKind is how a call ended.
type EndKind int

// The ways a call ends.
const (
	Returned EndKind = iota // the function returned
	Denied                  // Deny
	Crashed                 // Crash, or a bad block argument
	Exceeded                // Exceed
	TimedOut                // TimeUp, or CheckStop past the context
)

// End is how a call ended and the arguments of the method that ended it.
type End struct {
	Kind   EndKind
	Grant  string // Deny's grant kind
	Action string // Deny's action
	Reason string // Deny's or Crash's reason
	Limit  string // Exceed's limit
}

// Call is an in-memory hostcall.Call.
type Call struct {
	Ctx      context.Context
	Bounds   manifest.Limits // what Limits returns
	Describe bool
	// Used lists the grants Use recorded.
	Used   []string
	blocks map[uint64][]byte
	next   uint64
}

var _ hostcall.Call = (*Call)(nil)

// New returns a call under limits, with a background context.
func New(limits manifest.Limits) *Call {
	return &Call{Ctx: context.Background(), Bounds: limits, blocks: map[uint64][]byte{}, next: 8}
}

// ending is the panic value that ends a call.
type ending struct{ End }

// Run runs f as a host function and reports how the call ended.
func (c *Call) Run(f func()) (end End) {
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(ending)
			if !ok {
				panic(r)
			}
			end = e.End
		}
	}()
	f()
	return End{Kind: Returned}
}

// Block stores s as a block and returns its offset.
func (c *Call) Block(s string) uint64 { return c.Write([]byte(s)) }

// Bytes returns the block at off (nil when it is none).
func (c *Call) Bytes(off uint64) []byte { return c.blocks[off] }

func (c *Call) end(e End) { panic(ending{e}) }

func (c *Call) Context() context.Context { return c.Ctx }
func (c *Call) Describing() bool         { return c.Describe }
func (c *Call) Limits() manifest.Limits  { return c.Bounds }
func (c *Call) CheckStop() {
	if c.Ctx.Err() != nil {
		c.end(End{Kind: TimedOut})
	}
}

func (c *Call) View(off uint64, what string) []byte {
	if off == 0 {
		return []byte{}
	}
	b, ok := c.blocks[off]
	if !ok {
		c.Crash(fmt.Sprintf("%s: %d is not an Extism memory block", what, off))
	}
	return b
}

func (c *Call) Read(off uint64, what string, max int64) []byte {
	b := c.View(off, what)
	if int64(len(b)) > max {
		c.Crash(fmt.Sprintf("%s: %d bytes, more than the %d it takes", what, len(b), max))
	}
	return append([]byte(nil), b...)
}

func (c *Call) ReadLimited(off uint64, what, limit string, max int64) []byte {
	b := c.View(off, what)
	if int64(len(b)) > max {
		c.Exceed(limit)
	}
	return append([]byte(nil), b...)
}

func (c *Call) Write(b []byte) uint64 {
	if len(b) == 0 {
		return 0
	}
	return c.WritePresent(b)
}

func (c *Call) WritePresent(b []byte) uint64 {
	off := c.next
	c.next += 8 + uint64(len(b))&^7
	c.blocks[off] = append([]byte{}, b...)
	return off
}

func (c *Call) Free(off uint64)  { delete(c.blocks, off) }
func (c *Call) Use(grant string) { c.Used = append(c.Used, grant) }
func (c *Call) Deny(kind, action, reason string) {
	c.end(End{Kind: Denied, Grant: kind, Action: action, Reason: reason})
}
func (c *Call) Crash(reason string) { c.end(End{Kind: Crashed, Reason: reason}) }
func (c *Call) Exceed(limit string) { c.end(End{Kind: Exceeded, Limit: limit}) }
func (c *Call) TimeUp()             { c.end(End{Kind: TimedOut}) }
