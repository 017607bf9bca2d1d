package pdk

import "fmt"

// Level is the severity of a log message.
type Level int

// The Extism log levels.
const (
	LevelTrace Level = iota
	LevelDebug
	LevelInfo
	LevelWarn
	LevelError
)

// Log sends msg to the host's log at level. The host drops messages below
// its own level; logs are for operators, never seen by the model.
func Log(level Level, msg string) { logMessage(level, msg) }

// Logf formats and logs a message at level.
func Logf(level Level, format string, args ...any) { logMessage(level, fmt.Sprintf(format, args...)) }
