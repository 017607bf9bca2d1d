// Package kernelfn holds the Go side of the Extism kernel: the functions
// it imports (those of extism:host/env that need the host: config,
// variables, logs), the error of a failure it records as it traps
// ([Fail]), and yield, which the rewrite inserts into every guest. A guest reaches them only through the kernel or the
// rewrite (it may not import the kernel's module itself), so they take
// what the guest passes as untrusted, as every host function does.
package kernelfn

import (
	"fmt"
	"log/slog"
	"math"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
	"github.com/autoagent-go/autoagent/host/internal/kernel"
	"github.com/autoagent-go/autoagent/host/internal/rewrite"
	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
)

// Call is the guest call as the kernel's imports see it.
type Call interface {
	hostcall.Call
	// InputLen is the length of the call's input, for the error of an
	// input_load past it.
	InputLen() uint64
	// Config returns the module's config value key (none under
	// describe), recording the use of an env: grant it comes from.
	Config(key string) (string, bool)
	// Vars are the instance's Extism variables.
	Vars() *kernel.Vars
	// LogEnabled reports whether the host's logger keeps level; false
	// without a logger.
	LogEnabled(level slog.Level) bool
	// TakeLog takes one of the call's logs: false when the host has no
	// logger or the call has had its share, and nothing is logged.
	TakeLog() bool
	// Log writes msg to the host's logger with the module and tool, then
	// args.
	Log(level slog.Level, msg string, args ...any)
}

// Extism's log levels, as get_log_level reports them.
const (
	levelTrace = iota
	levelDebug
	levelInfo
	levelWarn
	levelError
)

// Levels are the slog levels of Extism's, by Extism level.
var Levels = [...]slog.Level{slog.LevelDebug - 4, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}

// MaxLogMessage bounds one log message; the rest is cut.
const MaxLogMessage = 4 << 10

// maxNameBytes bounds a config key or variable name.
const maxNameBytes = 4 << 10

var (
	i32 = hostcall.I32
	i64 = hostcall.I64
	sig = hostcall.Sig
)

// Funcs are the kernel's Go imports but yield; the network's
// (netcap.Funcs) join them in the same module.
var Funcs = []hostcall.Func[Call]{
	{Name: "config_get", Params: sig(i64), Results: sig(i64), Fn: func(c Call, s []uint64) {
		v, ok := c.Config(string(c.Read(s[0], "config_get", maxNameBytes)))
		if !ok {
			s[0] = 0
			return
		}
		s[0] = c.Write([]byte(v))
	}},
	{Name: "var_get", Params: sig(i64), Results: sig(i64), Fn: func(c Call, s []uint64) {
		v, ok := c.Vars().Get(string(c.Read(s[0], "var_get", maxNameBytes)))
		if !ok {
			s[0] = 0
			return
		}
		s[0] = c.Write(v)
	}},
	{Name: "var_set", Params: sig(i64, i64), Fn: func(c Call, s []uint64) { varSet(c, s[0], s[1]) }},
	{Name: "get_log_level", Results: sig(i32), Fn: func(c Call, s []uint64) { s[0] = uint64(logLevel(c)) }},
	{Name: "log_trace", Params: sig(i64), Fn: func(c Call, s []uint64) { log(c, levelTrace, s[0]) }},
	{Name: "log_debug", Params: sig(i64), Fn: func(c Call, s []uint64) { log(c, levelDebug, s[0]) }},
	{Name: "log_info", Params: sig(i64), Fn: func(c Call, s []uint64) { log(c, levelInfo, s[0]) }},
	{Name: "log_warn", Params: sig(i64), Fn: func(c Call, s []uint64) { log(c, levelWarn, s[0]) }},
	{Name: "log_error", Params: sig(i64), Fn: func(c Call, s []uint64) { log(c, levelError, s[0]) }},
}

// Fail turns a failure the kernel recorded as it trapped
// (kernel.Memory.Failure) into the call's error: it never returns.
func Fail(c Call, code kernel.Failure, arg uint64) {
	switch code {
	case kernel.FailLoad:
		c.Crash(fmt.Sprintf("load: offset %d out of bounds of Extism memory", arg))
	case kernel.FailStore:
		c.Crash(fmt.Sprintf("store: offset %d out of bounds of Extism memory", arg))
	case kernel.FailInput:
		c.Crash(fmt.Sprintf("input_load: index %d past the input's %d bytes", arg, c.InputLen()))
	case kernel.FailOutput:
		c.Exceed(hostcall.LimitOutput)
	case kernel.FailNoMemory:
		c.Exceed(hostcall.LimitMemory)
	case kernel.FailInputSet:
		c.Crash(fmt.Sprintf("input_set: offset %d out of bounds of Extism memory", arg))
	case kernel.FailOutputSet:
		c.Crash(fmt.Sprintf("output_set: offset %d out of bounds of Extism memory", arg))
	}
	c.Crash(fmt.Sprintf("the Extism kernel failed (code %d)", code))
}

func varSet(c Call, nameOff, valueOff uint64) {
	name := string(c.Read(nameOff, "var_set", maxNameBytes))
	if valueOff == 0 {
		c.Vars().Delete(name)
		return
	}
	v := c.Read(valueOff, "var_set", kernel.MaxVarBytes)
	if err := c.Vars().Set(name, v); err != nil {
		c.Crash(err.Error())
	}
}

// logLevel is the most verbose level the host's logger keeps.
func logLevel(c Call) int32 {
	for i, l := range Levels {
		if c.LogEnabled(l) {
			return int32(i)
		}
	}
	return math.MaxInt32
}

// log forwards a guest log message to the host's logger, bounded so a
// guest cannot flood it.
func log(c Call, level int, off uint64) {
	view := c.View(off, "log")
	if !c.TakeLog() {
		c.Free(off)
		return
	}
	msg := append([]byte(nil), view[:min(len(view), MaxLogMessage)]...)
	if len(view) > MaxLogMessage {
		msg = append(msg, "…"...)
	}
	c.Free(off)
	c.Log(Levels[level], string(msg))
}

// Yielder is the running instance as yield sees it.
type Yielder interface {
	// CheckStop ends the call when it must stop.
	CheckStop()
	// StackExhausted ends the call with its stack limit's error.
	StackExhausted()
	// EnterGo and LeaveGo mark the guest as in the host's Go code
	// (see the watchdog); LeaveGo restores what EnterGo returned.
	EnterGo(op string) (was bool)
	LeaveGo(was bool)
}

// Yield is where an interruptible guest exits to Go every yieldEvery
// checks: the Go scheduler may preempt it here, and the host stops it
// when asked. The rewrite also calls it, with reason wasmbin.YieldStack,
// when the guest's stack budget is spent, and around every ref.func and
// table.grow (wasmbin.YieldEnterGo, YieldLeaveGo), which the runtime runs
// in Go. It is added without the gate (hostmod.AddUngated): it is the stop
// check itself.
var Yield = []hostcall.Func[Yielder]{
	{Name: rewrite.YieldImport, Params: sig(i32), Fn: func(y Yielder, s []uint64) {
		switch uint32(s[0]) {
		case wasmbin.YieldStack:
			y.StackExhausted()
		case wasmbin.YieldEnterGo:
			y.CheckStop()
			y.EnterGo("ref.func or table.grow")
			return
		case wasmbin.YieldLeaveGo:
			y.LeaveGo(false)
			return
		}
		y.CheckStop()
	}},
}
