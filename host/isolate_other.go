//go:build !linux

package host

import "os/exec"

const sandboxMemoryEnv = "AUTOAGENT_HOST_SANDBOX_MEMORY"

// Elsewhere the sandbox process has no resource limits of its own; it is
// still killed when it does not answer in time.
func sandboxProcAttr(*exec.Cmd) {}
func limitSandbox()             {}
