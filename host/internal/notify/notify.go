// Package notify holds hyper-mcp's notification functions
// (extism:host/user), which the host provides to every module without a
// grant: they tell the host something and reach nothing outside it.
package notify

import (
	"encoding/json"
	"log/slog"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
)

// Call is the guest call as the notifications see it.
type Call interface {
	hostcall.Call
	// ListChanged records that the module said its lists changed.
	ListChanged()
	// TakeLog takes one of the call's logs: false when the host has no
	// logger or the call has had its share, and nothing is logged.
	TakeLog() bool
	// Log writes msg to the host's logger with the module and tool, then
	// args.
	Log(level slog.Level, msg string, args ...any)
}

// MaxMessage bounds a notification's parameters, as log_* bounds a
// message.
const MaxMessage = 4 << 10

// Funcs are the notification functions.
var Funcs = []hostcall.Func[Call]{
	{Name: "notify_tool_list_changed", Fn: func(c Call, _ []uint64) { c.ListChanged() }},
	{Name: "notify_prompt_list_changed", Fn: func(c Call, _ []uint64) { c.ListChanged() }},
	{Name: "notify_resource_list_changed", Fn: func(c Call, _ []uint64) { c.ListChanged() }},
	{Name: "notify_logging_message", Params: hostcall.Sig(hostcall.I64), Fn: func(c Call, s []uint64) { logMessage(c, s[0]) }},
	{Name: "notify_progress", Params: hostcall.Sig(hostcall.I64), Fn: func(c Call, s []uint64) { debug(c, "progress", s[0]) }},
	{Name: "notify_resource_updated", Params: hostcall.Sig(hostcall.I64), Fn: func(c Call, s []uint64) { debug(c, "resource updated", s[0]) }},
}

// logMessage forwards a notify_logging_message ({"level", "logger",
// "data"}, MCP's LoggingMessageNotification params) to the host's logger,
// bounded as log_* is.
func logMessage(c Call, off uint64) {
	raw := c.Read(off, "notify_logging_message", MaxMessage)
	if !c.TakeLog() {
		return
	}
	var m struct {
		Level  string          `json:"level"`
		Logger string          `json:"logger"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		c.Log(slog.LevelWarn, "notify_logging_message: not MCP logging params", "error", err)
		return
	}
	level := slog.LevelInfo
	switch m.Level {
	case "debug":
		level = slog.LevelDebug
	case "notice", "info":
	case "warning":
		level = slog.LevelWarn
	default: // error, critical, alert, emergency
		level = slog.LevelError
	}
	data := string(m.Data)
	var s string
	if json.Unmarshal(m.Data, &s) == nil {
		data = s
	}
	c.Log(level, data, "logger", m.Logger)
}

// debug logs a notification the host does not act on, bounded as log_*
// is: it counts against the call's logs.
func debug(c Call, what string, off uint64) {
	raw := c.Read(off, what, MaxMessage)
	if c.TakeLog() {
		c.Log(slog.LevelDebug, "notification: "+what, "params", string(raw))
	}
}
