// Package backenddir says where the binaries of go-plugin backends live.
// It is apart from package backend so that a program protecting the
// directory (autoagent.Config.Protects) links no plugin machinery.
package backenddir

import (
	"os"
	"path/filepath"
	"runtime"
)

// Env names the environment variable that sets the backends directory
// when no directory is given explicitly.
const Env = "AUTOAGENT_BACKENDS"

// Default returns the backends directory used when neither an explicit
// directory nor $AUTOAGENT_BACKENDS names one: autoagent/backends in the
// user's configuration directory ($XDG_CONFIG_HOME when absolute, else
// ~/.config; the user configuration directory on Windows), never a
// directory of the working directory, where a checkout could ship
// binaries that would run natively. "" when there is no home directory.
func Default() string {
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "autoagent", "backends")
	}
	if runtime.GOOS == "windows" {
		if d, err := os.UserConfigDir(); err == nil {
			return filepath.Join(d, "autoagent", "backends")
		}
		return ""
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".config", "autoagent", "backends")
	}
	return ""
}

// Dir returns the backends directory to search: explicit when it is not
// empty, else $AUTOAGENT_BACKENDS, else [Default]. No binary runs from
// a directory the user did not name or own.
func Dir(explicit string) string {
	if explicit != "" {
		return explicit
	}
	if d := os.Getenv(Env); d != "" {
		return d
	}
	return Default()
}
