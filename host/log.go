package host

import (
	"context"
	"log/slog"
	"math"
)

// Extism's log levels, as get_log_level reports them.
const (
	levelTrace = iota
	levelDebug
	levelInfo
	levelWarn
	levelError
)

const (
	maxLogMessage  = 4 << 10
	maxLogsPerCall = 1000
)

var slogLevels = [...]slog.Level{slog.LevelDebug - 4, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}

// logger returns the host's logger for one more of the call's logs, or
// nil when there is none or the call has had its maxLogsPerCall: every
// kind of guest log counts against the same bound.
func (inst *instance) logger() *slog.Logger {
	lg := inst.l.h.opts.Logger
	if lg == nil || inst.logs >= maxLogsPerCall {
		return nil
	}
	inst.logs++
	return lg
}

// log forwards a guest log message to the host's logger, bounded so a
// guest cannot flood it.
func (inst *instance) log(level int, off uint64) {
	view := inst.View(off, "log")
	lg := inst.logger()
	if lg == nil {
		inst.k.Free(off)
		return
	}
	msg := append([]byte(nil), view[:min(len(view), maxLogMessage)]...)
	if len(view) > maxLogMessage {
		msg = append(msg, "…"...)
	}
	inst.k.Free(off)
	lg.Log(context.Background(), slogLevels[level], string(msg), "module", inst.l.name, "tool", inst.tool)
}

// logLevel is the most verbose level the host's logger keeps.
func (inst *instance) logLevel() int32 {
	lg := inst.l.h.opts.Logger
	if lg == nil {
		return math.MaxInt32
	}
	for i, l := range slogLevels {
		if lg.Enabled(context.Background(), l) {
			return int32(i)
		}
	}
	return math.MaxInt32
}
