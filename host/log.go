package host

import "log/slog"

// maxLogsPerCall bounds the logs of one call: every kind of guest log
// (log_*, notify_*) counts against it.
const maxLogsPerCall = 1000

// logger returns the host's logger for one more of the call's logs, or
// nil when there is none or the call has had its maxLogsPerCall.
func (inst *instance) logger() *slog.Logger {
	lg := inst.l.h.opts.Logger
	if lg == nil || inst.call.logs >= maxLogsPerCall {
		return nil
	}
	inst.call.logs++
	return lg
}
