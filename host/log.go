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

// log forwards a guest log message to the host's logger, bounded so a
// guest cannot flood it.
func (inst *instance) log(level int, off uint64) {
	msg := inst.read(off, "log")
	inst.k.free(off)
	lg := inst.l.h.opts.Logger
	if lg == nil || inst.logs >= maxLogsPerCall {
		return
	}
	inst.logs++
	if len(msg) > maxLogMessage {
		msg = append(msg[:maxLogMessage], "…"...)
	}
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
