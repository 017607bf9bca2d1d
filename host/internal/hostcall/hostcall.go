// Package hostcall is what a host function sees of the guest call that
// invoked it: [Call], the one narrow interface every package of functions
// a guest can reach is written against (the capabilities netcap, kvcap,
// fscap; kernelfn, toolcall, notify, appfn), and [Func], the entry of such
// a package's table of functions.
//
// A capability reads the guest's arguments, checks them against its grants
// and does its work through a Call; it never sees the instance, the
// runtime or another capability's state, so each capability's code reads
// on its own and the security boundary is the interface below. The host
// (package host) implements Call once, for its running instance, and
// package hostmod registers every table with the same gate: a stop check
// before the function, the watchdog told the guest is in the host. A
// package that needs more of the call than Call says declares its own
// interface embedding Call, one method per question (toolcall.Call adds
// ToolGranted, CanDispatch and Dispatch), which the instance answers.
//
//	var Funcs = []hostcall.Func[Call]{
//		{Name: "kv_get", Params: hostcall.Sig(I64, I64), Results: hostcall.Sig(I64), Grant: "kv",
//			Fn: func(c Call, s []uint64) { s[0] = get(c, s[0], s[1]) }},
//	}
//
// # Ending a call
//
// The methods that end the call (Deny, Crash, Exceed, TimeUp, and Read and
// friends on a bad argument) never return: they record why and unwind the
// guest with a panic the host recovers. A capability therefore checks
// first and acts after, and holds no lock or open resource across a call
// that may end it unless a defer releases it.
package hostcall

import (
	"context"

	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/manifest"
)

// Call is the guest call in progress, as a host function sees it. It is
// valid only while the host function runs, on the goroutine that runs it.
type Call interface {
	// Context ends when the call must end: its deadline, its caller
	// giving up, the host closing. A function that blocks passes it on.
	Context() context.Context
	// Describing reports whether the call is a module's describe, which
	// runs with no capabilities: every capability function refuses it.
	Describing() bool
	// Limits are the call's limits.
	Limits() manifest.Limits
	// CheckStop ends the call when it must stop (its time is up, the host
	// is closing); a function doing long work calls it between steps.
	CheckStop()

	// Read returns a copy of the Extism memory block at off (0 reads as
	// empty). It ends the call as a crash naming what when off is not a
	// block, or when the block holds more than max bytes: no function
	// copies more than it needs, whatever the guest passes.
	Read(off uint64, what string, max int64) []byte
	// ReadLimited is Read for a value one of the call's limits bounds:
	// past max the call ends with that limit's error.
	ReadLimited(off uint64, what, limit string, max int64) []byte
	// View returns the block at off without copying it, valid until the
	// guest runs again or another block is written; a bad off ends the
	// call as Read does.
	View(off uint64, what string) []byte
	// Write copies b into a new block and returns its offset (0 for an
	// empty b). A block past the memory limit ends the call.
	Write(b []byte) uint64
	// WritePresent is Write for a result where 0 means "none": an empty b
	// still gets a block of its own, of length 0.
	WritePresent(b []byte) uint64
	// Free releases the block at off; an offset that is not a block is
	// ignored.
	Free(off uint64)

	// Use records that the call used grant (as the grant's string), for
	// the call's record.
	Use(grant string)
	// Deny ends the call with a refusal: kind is the grant kind involved,
	// action what was tried, reason why and what would allow it.
	Deny(kind, action, reason string)
	// Crash ends the call as a crash: "tool crashed: reason".
	Crash(reason string)
	// Exceed ends the call with the error of one of its limits (one of
	// the Limit* names); the host says what the limit is.
	Exceed(limit string)
	// TimeUp ends the call with its time limit's error.
	TimeUp()
}

// Func is one function of a capability's table, a guest import of
// extism:host/env or extism:host/user. C is the capability's own view of
// the call: Call and what the capability keeps per instance.
type Func[C any] struct {
	Name            string
	Params, Results []api.ValueType
	// Grant is the grant a module calling the function needs: a kind
	// ("net", "kv", "tools") for any grant of that kind, or a whole grant
	// ("host:NAMESPACE.NAME"); "" for none. A module importing it without
	// one loads; hostmod refuses each call before Fn runs.
	Grant string
	// Fn does the work: stack holds the parameters on entry and receives
	// the results, as in wazero's api.GoModuleFunc.
	Fn func(c C, stack []uint64)
}

// The value types of the Extism ABI.
const (
	I32 = api.ValueTypeI32
	I64 = api.ValueTypeI64
)

// Sig lists value types, for a Func's Params and Results.
func Sig(t ...api.ValueType) []api.ValueType { return t }

// The limits a call ends with (Call.Exceed), as host.LimitError names
// them; package host exports the same names as its Limit* constants.
const (
	LimitMemory         = "memory"
	LimitTime           = "time"
	LimitOutput         = "output"
	LimitHTTPResponse   = "HTTP response"
	LimitHTTPRequest    = "HTTP request"
	LimitKVValue        = "kv value"
	LimitKVNamespace    = "kv namespace"
	LimitStack          = "stack"
	LimitTables         = "table"
	LimitCallDepth      = "call depth"
	LimitCallTreeMemory = "call tree memory"
	LimitFSWrite        = "fs write"
	LimitOpenFiles      = "open files"
	LimitKVWrite        = "kv write"
)

// NoCapabilities is the reason every capability gives when it refuses a
// call under describe.
const NoCapabilities = "describe runs with no capabilities"
