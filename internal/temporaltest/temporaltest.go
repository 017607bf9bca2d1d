// Package temporaltest starts the Temporal dev server for tests:
//
//	srv := temporaltest.Start(t) // skips when the Temporal CLI is absent
//	c, err := client.Dial(client.Options{HostPort: srv.Addr})
//
// The server is `temporal server start-dev` of the CLI that
// .ci/install.d/temporal.sh builds into .cache/bin (or $TEMPORAL_CLI), on
// free loopback ports, with its database in a file of the test's
// temporary directory (or, StartInMemory, in memory); it is stopped when
// the test ends. Restart stops it and starts it again on the same ports and
// file, for tests of a server restart.
package temporaltest

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// Server is a running dev server.
type Server struct {
	// Addr is the frontend's host:port.
	Addr string

	t     testing.TB
	bin   string
	args  []string
	cmd   *exec.Cmd
	log   *os.File
	start time.Time
}

// Binary returns the Temporal CLI's path, or "" when it is not installed.
func Binary() string {
	if p := os.Getenv("TEMPORAL_CLI"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	for err == nil {
		p := filepath.Join(dir, ".cache", "bin", "temporal")
		if _, serr := os.Stat(p); serr == nil {
			return p
		}
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p
	}
	return ""
}

// Start starts a dev server, skipping the test when the CLI is absent.
// Its SQLite database is a file in the test's directory, which Restart
// keeps.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, true)
}

// StartInMemory starts a dev server whose database is in memory: several
// times faster under load (no file writes), for benchmarks; lost when it
// stops.
func StartInMemory(t testing.TB) *Server {
	t.Helper()
	return start(t, false)
}

func start(t testing.TB, persistent bool) *Server {
	t.Helper()
	bin := Binary()
	if bin == "" {
		t.Skip("the Temporal CLI is not installed: run .ci/install.d/temporal.sh (or `make deps`) to run the tests against a real Temporal server")
	}
	ports := freePorts(t, 3)
	dir := t.TempDir()
	s := &Server{
		Addr: "127.0.0.1:" + strconv.Itoa(ports[0]),
		t:    t, bin: bin,
		args: []string{"server", "start-dev", "--headless", "--ip", "127.0.0.1",
			"--port", strconv.Itoa(ports[0]), "--http-port", strconv.Itoa(ports[1]), "--metrics-port", strconv.Itoa(ports[2]),
			"--log-level", "error"},
	}
	if persistent {
		s.args = append(s.args, "--db-filename", filepath.Join(dir, "temporal.db"))
	}
	log, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	s.log = log
	s.run()
	t.Cleanup(s.Stop)
	return s
}

func (s *Server) run() {
	s.t.Helper()
	s.cmd = exec.Command(s.bin, s.args...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	ownGroup(s.cmd)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("start the Temporal dev server: %v", err)
	}
	s.start = time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		c, err := client.Dial(client.Options{HostPort: s.Addr, Logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))})
		if err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
			if err == nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			s.t.Fatalf("the Temporal dev server did not answer within 60s: %v\n%s", err, s.Log())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Stop stops the server (SIGTERM, then SIGKILL after 10 s).
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	stopGroup(s.cmd.Process, false)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		stopGroup(s.cmd.Process, true)
		<-done
	}
	s.cmd = nil
}

// Restart stops the server and starts it again on the same ports and
// database file.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.run()
}

// Log returns the server's output so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.log.Name())
	return strings.TrimSpace(string(b))
}

func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}
