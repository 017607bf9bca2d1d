package toolbuild

import (
	"fmt"
	"strings"
)

// MissingToolchainError reports a toolchain that is not installed.
type MissingToolchainError struct {
	Language Language
	// Tool is what is missing ("clang", "the wasm32-wasi Rust standard library").
	Tool string
	// Install says how to get it.
	Install string
}

func (e *MissingToolchainError) Error() string {
	return fmt.Sprintf("toolbuild: building %s needs %s, which is not installed; %s", e.Language, e.Tool, e.Install)
}

// BuildError reports a toolchain that ran and failed; Output holds what it
// printed, which names the problem in the source.
type BuildError struct {
	Language Language
	Command  []string
	Output   string
	Err      error
}

func (e *BuildError) Error() string {
	out := strings.TrimSpace(e.Output)
	if out == "" {
		out = e.Err.Error()
	}
	return fmt.Sprintf("toolbuild: %s build failed (%s):\n%s", e.Language, e.Command[0], out)
}

func (e *BuildError) Unwrap() error { return e.Err }
