package mcp

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"
)

// inheritedEnv are the variables a server subprocess gets from the parent
// by default: enough to find programs and a home directory, nothing that
// usually holds a secret. The same list the official TypeScript SDK passes.
var inheritedEnv = map[string][]string{
	"windows": {"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PROCESSOR_ARCHITECTURE",
		"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "USERNAME", "USERPROFILE", "PROGRAMFILES"},
	"": {"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"},
}

// commandEnv builds the environment of a server subprocess: the safe
// variables of the parent (or all of them with inherit), then env over
// them.
func commandEnv(env []string, inherit bool) []string {
	var base []string
	if inherit {
		base = os.Environ()
	} else {
		names, ok := inheritedEnv[runtime.GOOS]
		if !ok {
			names = inheritedEnv[""]
		}
		for _, n := range names {
			if v, ok := os.LookupEnv(n); ok {
				base = append(base, n+"="+v)
			}
		}
	}
	// exec uses the last value of a duplicated key, so env wins.
	return append(base, env...)
}

// stopGrace is how long Close waits for a server to exit after closing its
// standard input, and again after asking it to terminate, before killing it.
const stopGrace = 3 * time.Second

// process is an MCP server subprocess speaking newline-delimited JSON-RPC
// on its standard input and output.
type process struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *tail
	done   chan struct{} // closed once the process has exited and been reaped
	err    error         // cmd.Wait's result, set before done is closed
	stop   sync.Once
}

func startProcess(opts *ClientOptions) (*process, error) {
	cmd := exec.Command(opts.Command[0], opts.Command[1:]...)
	cmd.Dir = opts.Dir
	cmd.Env = commandEnv(opts.Env, opts.InheritEnv)
	p := &process{cmd: cmd, stderr: &tail{max: 30}, done: make(chan struct{})}
	if opts.Stderr != nil {
		cmd.Stderr = io.MultiWriter(p.stderr, opts.Stderr)
	} else {
		cmd.Stderr = p.stderr
	}
	// A grandchild holding stderr open must not keep Wait from returning.
	cmd.WaitDelay = stopGrace
	isolate(cmd)
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if p.stdout, err = cmd.StdoutPipe(); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", opts.Command[0], err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports how the process ended, or "" while it runs.
func (p *process) exited() string {
	select {
	case <-p.done:
		if p.err != nil {
			return p.err.Error()
		}
		return "exited with status 0"
	default:
		return ""
	}
}

// shutdown stops the server the way the MCP specification asks: close its
// input, wait, SIGTERM, wait, SIGKILL; signals go to its whole process
// group so that children it started (npx starts node) go too.
func (p *process) shutdown() error {
	p.stop.Do(func() {
		p.stdin.Close()
		wait := func() bool {
			t := time.NewTimer(stopGrace)
			defer t.Stop()
			select {
			case <-p.done:
				return true
			case <-t.C:
				return false
			}
		}
		if !wait() {
			terminate(p.cmd)
			if !wait() {
				kill(p.cmd)
				<-p.done
			}
		}
		// The server is gone; make sure nothing it started stays behind.
		kill(p.cmd)
	})
	return nil
}

// stdinCloser is the write side of the connection: closing it shuts the
// server down, which also ends the read side (its stdout reaches EOF).
type stdinCloser struct{ p *process }

func (s stdinCloser) Write(b []byte) (int, error) { return s.p.stdin.Write(b) }
func (s stdinCloser) Close() error                { return s.p.shutdown() }

// tail keeps the last lines written to it, for error messages.
type tail struct {
	mu      sync.Mutex
	max     int
	lines   []string
	partial []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.partial = append(t.partial, b...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			break
		}
		t.push(string(t.partial[:i]))
		t.partial = t.partial[i+1:]
	}
	if len(t.partial) > 4096 { // a line that never ends
		t.push(string(t.partial))
		t.partial = nil
	}
	return len(b), nil
}

func (t *tail) push(line string) {
	line = strings.TrimRight(line, "\r")
	if strings.TrimSpace(line) == "" {
		return
	}
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

// last returns up to n of the last lines, joined by " | ".
func (t *tail) last(n int) string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.partial) > 0 {
		lines = append(lines[:len(lines):len(lines)], string(t.partial))
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
