package host

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/autoagent-go/autoagent/host/internal/appfn"
	"github.com/autoagent-go/autoagent/host/internal/fscap"
	"github.com/autoagent-go/autoagent/host/internal/hostcall"
	"github.com/autoagent-go/autoagent/host/internal/hostmod"
	"github.com/autoagent-go/autoagent/host/internal/kernel"
	"github.com/autoagent-go/autoagent/host/internal/kernelfn"
	"github.com/autoagent-go/autoagent/host/internal/kvcap"
	"github.com/autoagent-go/autoagent/host/internal/netcap"
	"github.com/autoagent-go/autoagent/host/internal/notify"
	"github.com/autoagent-go/autoagent/host/internal/toolcall"
	"github.com/autoagent-go/autoagent/host/internal/wasiguard"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// The running instance is the call every host function sees: it
// implements hostcall.Call once, and each capability's view of it.
var (
	_ hostcall.Call    = (*instance)(nil)
	_ netcap.Call      = (*instance)(nil)
	_ kvcap.Call       = (*instance)(nil)
	_ fscap.Call       = (*instance)(nil)
	_ kernelfn.Call    = (*instance)(nil)
	_ kernelfn.Yielder = (*instance)(nil)
	_ toolcall.Call    = (*instance)(nil)
	_ notify.Call      = (*instance)(nil)
	_ appfn.Call       = (*instance)(nil)
	_ wasiguard.Call   = (*instance)(nil)
	_ hostmod.Gate     = (*instance)(nil)
)

// Context is the context of the run in progress (a runContext): it
// carries the instance and ends with the run. Between runs it is an
// ended context: nothing outlives the run it was made for, and the
// instance keeps no context of its own.
func (inst *instance) Context() context.Context {
	if c := inst.cur.Load(); c != nil {
		return c
	}
	return noRun
}

// noRun is an instance's context between runs: ended.
var noRun = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// Describing reports whether the instance serves a describe.
func (inst *instance) Describing() bool { return inst.describing }

// Limits are the call's limits.
func (inst *instance) Limits() Limits { return inst.limits }

// CheckStop ends the call when its time is up or the host is closing.
func (inst *instance) CheckStop() { inst.checkStop() }

// Read returns a copy of block off, ending the call when it is not a
// block or holds more than max bytes.
func (inst *instance) Read(off uint64, what string, max int64) []byte {
	b := inst.View(off, what)
	if int64(len(b)) > max {
		inst.Crash(fmt.Sprintf("%s: %d bytes, more than the %d it takes", what, len(b), max))
	}
	return append([]byte(nil), b...)
}

// ReadLimited is Read for a value a limit bounds: past max the call ends
// with that limit's error.
func (inst *instance) ReadLimited(off uint64, what, limit string, max int64) []byte {
	b := inst.View(off, what)
	if int64(len(b)) > max {
		inst.Exceed(limit)
	}
	return append([]byte(nil), b...)
}

// View returns block off in the kernel's memory, valid until the guest
// runs again. Offset 0 reads as empty: it is what alloc returns for no
// bytes.
func (inst *instance) View(off uint64, what string) []byte {
	if off == 0 {
		return []byte{}
	}
	b, ok := inst.k.Find(off)
	if !ok {
		inst.Crash(fmt.Sprintf("%s: %d is not an Extism memory block", what, off))
	}
	return b
}

// alloc returns a new block of n bytes, ending the call past the memory
// limit.
func (inst *instance) alloc(n uint64) (uint64, []byte) {
	off, data, ok := inst.k.Alloc(n)
	if !ok {
		inst.Exceed(LimitMemory)
	}
	return off, data
}

// Write copies b into a new block.
func (inst *instance) Write(b []byte) uint64 {
	off, data := inst.alloc(uint64(len(b)))
	copy(data, b)
	return off
}

// WritePresent is Write for a result where block 0 means "none": an
// empty b still gets a block of its own, of length 0.
func (inst *instance) WritePresent(b []byte) uint64 {
	if len(b) > 0 {
		return inst.Write(b)
	}
	off, ok := inst.k.AllocEmpty()
	if !ok {
		inst.Exceed(LimitMemory)
	}
	return off
}

// Free releases block off.
func (inst *instance) Free(off uint64) { inst.k.Free(off) }

// Use records that the call used grant.
func (inst *instance) Use(grant string) {
	if inst.call.used == nil {
		inst.call.used = map[string]bool{}
	}
	inst.call.used[grant] = true
}

// Deny records and ends the call with a refusal.
func (inst *instance) Deny(kind, action, reason string) {
	inst.deny(&DeniedError{Kind: kind, Action: action, Reason: reason})
}

// Refused records a refusal the guest was told of by an errno; the call
// goes on.
func (inst *instance) Refused(kind, action, reason string) {
	inst.call.denied = append(inst.call.denied, (&DeniedError{Kind: kind, Action: action, Reason: reason}).Error())
}

// Crash ends the call as a crash.
func (inst *instance) Crash(reason string) { inst.fail(&TrapError{Reason: reason}) }

// Exceed ends the call with the error of one of its limits.
func (inst *instance) Exceed(limit string) { inst.fail(limitError(inst.limits, limit)) }

// TimeUp ends the call with its time limit's error.
func (inst *instance) TimeUp() { inst.fail(timeLimitErr(inst.limits.Timeout)) }

// Net is the instance's use of the network, nil without a net: grant.
func (inst *instance) Net() *netcap.Session { return inst.net }

// KV is what the module may reach of the kv stores.
func (inst *instance) KV() kvcap.Access { return inst.l.kv }

// KVWritten counts the bytes the call wrote under its kv grants.
func (inst *instance) KVWritten() *int64 { return &inst.call.kvWritten }

// Tainted reports whether what the call writes is untrusted: its caller
// has seen untrusted content, or the instance holds some.
func (inst *instance) Tainted() bool { return inst.tainted || tool.Tainted(inst.Context()) }

// Taint marks the call's result untrusted, and the instance: its memory
// now holds what it read.
func (inst *instance) Taint() {
	inst.tainted = true
	tool.ReportTaint(inst.Context())
}

// FS is the instance's use of its fs grants' directories.
func (inst *instance) FS() *fscap.Usage { return &inst.fs }

// InHost marks the guest as in a host function, or back in its own code,
// for the watchdog.
func (inst *instance) InHost(in bool) { inst.watch.inHost.Store(in) }

// ChangedState records that the guest called a WASI function that may
// have changed its WASI state: the instance is never reset (see
// whyNoReset).
func (inst *instance) ChangedState() { inst.changedState = true }

// StackExhausted ends the call with its stack limit's error.
func (inst *instance) StackExhausted() { inst.fail(limitErr(LimitStack, inst.limits.Stack)) }

// EnterGo and LeaveGo are enterGo and leaveGo, for yield.
func (inst *instance) EnterGo(op string) bool { return inst.enterGo(op) }
func (inst *instance) LeaveGo(was bool)       { inst.leaveGo(was) }

// InputLen is the length of the call's input.
func (inst *instance) InputLen() uint64 { return inst.k.InputLen() }

// Vars are the instance's Extism variables.
func (inst *instance) Vars() *kernel.Vars { return &inst.vars }

// LogEnabled reports whether the host's logger keeps level.
func (inst *instance) LogEnabled(level slog.Level) bool {
	lg := inst.l.h.opts.Logger
	return lg != nil && lg.Enabled(context.Background(), level)
}

// TakeLog takes one of the call's logs (see logger).
func (inst *instance) TakeLog() bool { return inst.logger() != nil }

// Log writes msg to the host's logger with the module and tool, then args.
func (inst *instance) Log(level slog.Level, msg string, args ...any) {
	if lg := inst.l.h.opts.Logger; lg != nil {
		lg.Log(context.Background(), level, msg, append([]any{"module", inst.l.name, "tool", inst.call.tool}, args...)...)
	}
}

// ListChanged records that the module said its lists changed.
func (inst *instance) ListChanged() { inst.call.listChanged = true }

// ToolGranted reports whether the module may call the host tool name.
func (inst *instance) ToolGranted(name string) bool {
	if inst.l.anyTool {
		return true
	}
	for _, g := range inst.l.grants {
		if g.Kind == manifest.KindTools && g.Name == name {
			return true
		}
	}
	return false
}

// CanDispatch reports whether the host has a tool dispatcher.
func (inst *instance) CanDispatch() bool { return inst.l.h.opts.CallTool != nil }

// Dispatch calls a host tool through the host's dispatcher. The call's
// context says where in the call tree the host tool's own sandboxed
// calls, if any, nest.
func (inst *instance) Dispatch(c tool.Call) (tool.Result, error) {
	return inst.l.h.opts.CallTool(context.WithValue(inst.Context(), callNodeKey{}, &inst.node), c)
}

// Granted reports whether the module has grant.
func (inst *instance) Granted(grant string) bool { return inst.l.has[grant] }

// Failure is the failure the host recorded for the call, nil for none.
func (inst *instance) Failure() error { return inst.call.abort }

// FunctionFailed ends the call with an application function's failure.
func (inst *instance) FunctionFailed(function string, err error) {
	inst.fail(&FunctionError{Function: function, Err: err})
}

// limitError is the error of the limit named limit (a Limit* constant)
// at its value in limits.
func limitError(limits Limits, limit string) *LimitError {
	var n int64
	switch limit {
	case LimitTime:
		return timeLimitErr(limits.Timeout)
	case LimitOpenFiles:
		return &LimitError{Limit: limit, Value: strconv.Itoa(limits.OpenFiles) + " files"}
	case LimitTables:
		return &LimitError{Limit: limit, Value: strconv.FormatInt(limits.Tables, 10) + " entries"}
	case LimitCallDepth:
		return &LimitError{Limit: limit, Value: strconv.Itoa(limits.CallDepth)}
	case LimitMemory:
		n = limits.Memory
	case LimitOutput:
		n = limits.Output
	case LimitHTTPResponse:
		n = limits.HTTPResponse
	case LimitHTTPRequest:
		n = limits.HTTPRequest
	case LimitKVValue:
		n = limits.KVValue
	case LimitKVNamespace:
		n = limits.KVNamespace
	case LimitFSWrite:
		n = limits.FSWrite
	case LimitKVWrite:
		n = limits.KVWrite
	case LimitStack:
		n = limits.Stack
	case LimitCallTreeMemory:
		n = limits.CallTreeMemory
	default:
		panic("host: no limit " + strconv.Quote(limit))
	}
	return limitErr(limit, n)
}
