//go:build wasip1

package pdk

import "github.com/autoagent-go/autoagent/pdk/go/extism"

func logMessage(level Level, msg string) {
	off := extism.Write([]byte(msg)) // the host frees it
	switch level {
	case LevelTrace:
		extism.LogTrace(off)
	case LevelDebug:
		extism.LogDebug(off)
	case LevelInfo:
		extism.LogInfo(off)
	case LevelWarn:
		extism.LogWarn(off)
	default:
		extism.LogError(off)
	}
}
