//go:build !wasip1

package pdk

import (
	"fmt"
	"os"
)

var levelNames = [...]string{"trace", "debug", "info", "warn", "error"}

// Outside a host, logs go to standard error, where go test shows them.
func logMessage(level Level, msg string) {
	name := "error"
	if level >= 0 && int(level) < len(levelNames) {
		name = levelNames[level]
	}
	fmt.Fprintf(os.Stderr, "pdk %s: %s\n", name, msg)
}
