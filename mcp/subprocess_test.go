package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/testsys"

	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

// The test binary doubles as the MCP servers the subprocess tests start
// (hashicorp/go-plugin's TestHelperProcess pattern): helperEnv selects
// what it plays.
const helperEnv = "AUTOAGENT_MCP_TEST_HELPER"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "server":
		helperServer()
	case "sleeper":
		time.Sleep(time.Hour)
	case "conformance-client":
		os.Exit(conformanceClient())
	case "junk":
		fmt.Println("this is not JSON-RPC")
		fmt.Fprintln(os.Stderr, "fatal: config file /etc/srv.toml not found")
		os.Exit(2)
	}
	os.Exit(0)
}

// helperServer serves tools that report on the process they run in.
func helperServer() {
	environ := fnTool("environ", `{"type":"object"}`, func(context.Context, tool.Call) (tool.Result, error) {
		return tool.Text(strings.Join(os.Environ(), "\n")), nil
	})
	crash := fnTool("crash", `{"type":"object"}`, func(context.Context, tool.Call) (tool.Result, error) {
		fmt.Fprintln(os.Stderr, "panic: database is locked")
		os.Exit(3)
		return tool.Result{}, nil
	})
	spawn := fnTool("spawn", `{"type":"object"}`, func(context.Context, tool.Call) (tool.Result, error) {
		self, err := os.Executable()
		if err != nil {
			return tool.Result{}, err
		}
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), helperEnv+"=sleeper")
		if err := cmd.Start(); err != nil {
			return tool.Result{}, err
		}
		return tool.Text(strconv.Itoa(cmd.Process.Pid)), nil
	})
	srv := mcp.NewServer(mcp.ServerOptions{Name: "helper"})
	if err := srv.SetTools([]tool.Tool{echoTool(), environ, crash, spawn}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := srv.ServeStdio(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func helperCommand(t *testing.T) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{self}
}

func connectHelper(t *testing.T, opts mcp.ClientOptions) *mcp.Client {
	t.Helper()
	opts.Command = helperCommand(t)
	opts.Env = append(opts.Env, helperEnv+"=server")
	c, err := mcp.Connect(context.Background(), opts)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCommandServer(t *testing.T) {
	c := connectHelper(t, mcp.ClientOptions{})
	if c.ServerInfo().Name != "helper" {
		t.Errorf("ServerInfo = %+v", c.ServerInfo())
	}
	echo, ok := c.Tool("echo")
	if !ok {
		t.Fatalf("tools = %v", toolNames(c.Tools()))
	}
	if res := mustCall(t, echo, `{"msg":"over stdio"}`); res.Text() != "over stdio" {
		t.Errorf("echo = %+v", res)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestCommandEnvironment(t *testing.T) {
	t.Setenv("AUTOAGENT_TEST_SECRET", "s3cret")
	environ := func(c *mcp.Client) string {
		tl, _ := c.Tool("environ")
		return mustCall(t, tl, `{}`).Text()
	}

	env := environ(connectHelper(t, mcp.ClientOptions{Env: []string{"GREETING=hi"}}))
	if strings.Contains(env, "s3cret") {
		t.Errorf("the server inherited a variable it was not given:\n%s", env)
	}
	if !strings.Contains(env, "GREETING=hi") {
		t.Errorf("the server lacks the variable it was given:\n%s", env)
	}
	if runtime.GOOS != "windows" && !strings.Contains(env, "PATH="+os.Getenv("PATH")) {
		t.Errorf("the server lacks PATH, which it needs to start programs:\n%s", env)
	}

	env = environ(connectHelper(t, mcp.ClientOptions{InheritEnv: true, Env: []string{"AUTOAGENT_TEST_SECRET=override"}}))
	if !strings.Contains(env, "AUTOAGENT_TEST_SECRET=override") || strings.Contains(env, "s3cret") {
		t.Errorf("with InheritEnv, Env must win over the inherited value:\n%s", env)
	}
}

func TestCommandServerCrashIsInfrastructureError(t *testing.T) {
	c := connectHelper(t, mcp.ClientOptions{})
	crash, _ := c.Tool("crash")
	_, err := crash.Call(context.Background(), tool.Call{Arguments: json.RawMessage(`{}`)})
	var se *mcp.ServerError
	if !errors.As(err, &se) {
		t.Fatalf("a crashed server: %v, want a *mcp.ServerError", err)
	}
	if se.Method != "tools/call" || se.Tool != "crash" || !strings.Contains(se.Stderr, "database is locked") {
		t.Errorf("ServerError = %+v", se)
	}
	if !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("the error does not say how the server ended: %v", err)
	}
	echo, _ := c.Tool("echo")
	if _, err := echo.Call(context.Background(), tool.Call{Arguments: json.RawMessage(`{"msg":"x"}`)}); err == nil {
		t.Errorf("a call to a dead server succeeded")
	}
}

func TestCommandConnectFailures(t *testing.T) {
	_, err := mcp.Connect(context.Background(), mcp.ClientOptions{Command: []string{"/nonexistent/mcp-server"}})
	var se *mcp.ServerError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "/nonexistent/mcp-server") {
		t.Errorf("a missing program: %v", err)
	}

	_, err = mcp.Connect(context.Background(), mcp.ClientOptions{
		Command: helperCommand(t), Env: []string{helperEnv + "=junk"}, Timeout: 10 * time.Second,
	})
	if !errors.As(err, &se) || se.Method != "initialize" || !strings.Contains(se.Stderr, "srv.toml not found") {
		t.Errorf("a server that fails at start: %v, want a ServerError carrying its stderr", err)
	}

	for _, opts := range []mcp.ClientOptions{
		{},
		{Command: []string{"x"}, URL: "http://localhost/mcp"},
		{URL: "ftp://example.com/"},
		{Command: []string{""}},
	} {
		if _, err := mcp.Connect(context.Background(), opts); err == nil || !strings.HasPrefix(err.Error(), "mcp: ") {
			t.Errorf("Connect(%+v) = %v, want an option error", opts, err)
		}
	}
}

func TestCommandCloseStopsEveryProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads process states from /proc")
	}
	c := connectHelper(t, mcp.ClientOptions{})
	spawn, _ := c.Tool("spawn")
	pid, err := strconv.Atoi(mustCall(t, spawn, `{}`).Text())
	if err != nil {
		t.Fatal(err)
	}
	if !alive(pid) {
		t.Fatalf("the grandchild %d is not running", pid)
	}
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
	waitFor(t, "the grandchild to be gone", func() bool { return !alive(pid) })
}

// alive reports whether pid runs (a zombie waiting to be reaped by init
// does not count).
func alive(pid int) bool {
	if !testsys.Exists(pid) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}
