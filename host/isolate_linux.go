package host

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// sandboxMemoryEnv passes Isolation.Memory to the sandbox process.
const sandboxMemoryEnv = "AUTOAGENT_HOST_SANDBOX_MEMORY"

// sandboxProcAttr makes the sandbox process die with this one and keeps
// it out of this process's group (a terminal's ^C is the host's to handle).
func sandboxProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// limitSandbox sets the sandbox process's own resource limits: address
// space, open files, no core dumps.
func limitSandbox() {
	if n, err := strconv.ParseUint(os.Getenv(sandboxMemoryEnv), 10, 64); err == nil && n > 0 {
		_ = unix.Setrlimit(unix.RLIMIT_AS, &unix.Rlimit{Cur: n, Max: n})
	}
	_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: 256, Max: 256})
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
}
