//go:build wasip1

package pdk

func logMessage(level Level, msg string) {
	off := writeBlock([]byte(msg)) // the host frees it
	switch level {
	case LevelTrace:
		extismLogTrace(off)
	case LevelDebug:
		extismLogDebug(off)
	case LevelInfo:
		extismLogInfo(off)
	case LevelWarn:
		extismLogWarn(off)
	default:
		extismLogError(off)
	}
}
