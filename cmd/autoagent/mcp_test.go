package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/testsys"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/host/plugindir"
	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

// serving is `autoagent mcp serve` running in the test process through
// run(), with its standard streams as pipes.
type serving struct {
	t      *testing.T
	stdin  *io.PipeWriter
	stdout *io.PipeReader
	lines  chan string   // stderr, line by line
	read   chan struct{} // closed once stderr is read to its end
	code   chan int
}

func startServe(t *testing.T, args ...string) *serving {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	s := &serving{t: t, stdin: inW, stdout: outR, lines: make(chan string, 100), read: make(chan struct{}), code: make(chan int, 1)}
	// A stdio server ends when its input closes, even when the test failed
	// before closing it.
	t.Cleanup(func() { inW.Close() })
	go func() {
		code := run(append([]string{"mcp", "serve"}, args...), inR, outW, errW)
		outW.Close()
		errW.Close()
		s.code <- code
	}()
	// A server still running when the test ends (--http) may write more,
	// e.g. the watcher seeing the test's directory removed: that is not
	// logged, since a test may not log once it has completed.
	var logMu sync.Mutex
	ended := false
	t.Cleanup(func() {
		logMu.Lock()
		ended = true
		logMu.Unlock()
	})
	go func() {
		defer close(s.read)
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			logMu.Lock()
			if !ended {
				t.Logf("stderr: %s", sc.Text())
			}
			logMu.Unlock()
			select {
			case s.lines <- sc.Text():
			default:
			}
		}
	}()
	return s
}

// waitLine returns the first stderr line matching re.
func (s *serving) waitLine(re string) []string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line := <-s.lines:
			if m := rx.FindStringSubmatch(line); m != nil {
				return m
			}
		case <-timeout:
			s.t.Fatalf("no stderr line matching %q", re)
		}
	}
}

func (s *serving) exitCode() int {
	s.t.Helper()
	select {
	case code := <-s.code:
		<-s.read
		return code
	case <-time.After(30 * time.Second):
		s.t.Fatal("autoagent mcp serve did not exit")
		return -1
	}
}

// stdioConn is the client's end of the server's standard streams.
type stdioConn struct {
	io.Reader
	io.WriteCloser
}

func (c stdioConn) Close() error { return c.WriteCloser.Close() }

func TestMCPServeStdioHotReload(t *testing.T) {
	e := newCLIEnv(t)
	echoPath := e.add("echo.wasm")
	s := startServe(t) // ./plugins, nothing approved yet
	s.waitLine(`serving no tools yet`)

	changes := make(chan mcp.Change, 10)
	c, err := mcp.Connect(context.Background(), mcp.ClientOptions{
		Stream:   stdioConn{s.stdout, s.stdin},
		OnChange: func(ch mcp.Change) { changes <- ch },
	})
	if err != nil {
		t.Fatal(err)
	}
	if info := c.ServerInfo(); info.Name != "autoagent" {
		t.Errorf("ServerInfo = %+v", info)
	}
	if n := len(c.Tools()); n != 0 {
		t.Fatalf("%d tools served before any approval", n)
	}

	// Approving the module while serving makes its tools appear.
	e.mustRun(0, "tools", "approve", echoPath, "--yes")
	var ch mcp.Change
	select {
	case ch = <-changes:
	case <-time.After(30 * time.Second):
		t.Fatal("no tool appeared after the approval")
	}
	if !slices.Contains(ch.Added, "echo") {
		t.Fatalf("change = %+v, want echo added", ch)
	}
	echo, _ := c.Tool("echo")
	res, err := echo.Call(context.Background(), tool.Call{Arguments: json.RawMessage(`{"msg":"héllo"}`)})
	if err != nil || res.IsError || !strings.Contains(res.Text(), "héllo") {
		t.Errorf("echo over MCP = %+v, %v", res, err)
	}
	fail, _ := c.Tool("fail")
	if res := mustCallTool(t, fail, `{}`); !res.IsError {
		t.Errorf("a sandboxed tool's failure is not an error result over MCP: %+v", res)
	}
	if f := tool.FlagsOf(echo); !f.Untrusted {
		t.Errorf("flags = %+v: a client mounts served tools as untrusted by default", f)
	}

	// Revoking withdraws them.
	e.mustRun(0, "tools", "revoke", "echo")
	select {
	case ch = <-changes:
	case <-time.After(30 * time.Second):
		t.Fatal("the tools stayed after the revocation")
	}
	if !slices.Contains(ch.Removed, "echo") || len(c.Tools()) != 0 {
		t.Errorf("change = %+v, tools = %v; want every tool removed", ch, c.Tools())
	}

	// The client closing its end (stdin EOF) ends the server normally.
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if code := s.exitCode(); code != 0 {
		t.Errorf("exit %d after stdin closed, want 0", code)
	}
}

func mustCallTool(t *testing.T, tl tool.Tool, args string) tool.Result {
	t.Helper()
	if tl == nil {
		t.Fatal("tool not served")
	}
	res, err := tl.Call(context.Background(), tool.Call{Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestMCPServeHTTP(t *testing.T) {
	e := newCLIEnv(t)
	e.add("echo.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "echo.wasm"), "--yes")
	s := startServe(t, "--http", "127.0.0.1:0")
	url := s.waitLine(`over MCP at (http://\S+/mcp)`)[1]

	c, err := mcp.Connect(context.Background(), mcp.ClientOptions{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	spin, ok := c.Tool("spin")
	if !ok {
		t.Fatalf("tools = %v", c.Tools())
	}
	if len(spin.Spec().OutputSchema) == 0 {
		t.Errorf("spin's output schema was not served")
	}
	res := mustCallTool(t, spin, `{"n":3}`)
	if res.IsError || len(res.StructuredContent) == 0 {
		t.Errorf("spin over HTTP = %+v", res)
	}
	if res := mustCallTool(t, spin, `{"n":-1}`); !res.IsError {
		t.Errorf("spin with n=-1 (schema minimum 0) = %+v, want an error result", res)
	}

	// SIGTERM ends the server cleanly, sessions with open streams included.
	if err := testsys.Terminate(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if code := s.exitCode(); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

func TestMCPServeUsage(t *testing.T) {
	e := newCLIEnv(t)
	r := e.mustRun(1, "mcp", "serve", "--plugins", filepath.Join(e.root, "nowhere"))
	if !strings.Contains(r.stderr, "does not exist") || !strings.Contains(r.stderr, "tools approve") {
		t.Errorf("stderr = %q, want what to do about the missing directory", r.stderr)
	}
	e.mustRun(2, "mcp", "serve", "extra-arg")
	e.mustRun(2, "mcp", "serve", "--no-such-flag")
	r = e.mustRun(1, "mcp", "serve", "--http", "256.0.0.1:bad")
	if !strings.Contains(r.stderr, "--http") {
		t.Errorf("stderr = %q, want the bad address named", r.stderr)
	}
}

// A hyper-mcp v2 plugin's prompts, resources and completions are served
// by mcp serve, as its tools are: an MCP client lists and uses them.
func TestMCPServeHyperMCPPromptsAndResources(t *testing.T) {
	e := newCLIEnv(t)
	e.add("hypermcpv2go.wasm")
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "hypermcpv2go.wasm"), "--yes")
	s := startServe(t, "--http", "127.0.0.1:0")
	url := s.waitLine(`over MCP at (http://\S+/mcp)`)[1]

	ctx := t.Context()
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 3 {
		t.Fatalf("tools: %v %+v", err, tools)
	}
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "review" || !prompts.Prompts[0].Arguments[0].Required {
		t.Fatalf("prompts: %v %+v", err, prompts)
	}
	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "review", Arguments: map[string]string{"language": "Rust"}})
	if err != nil || len(got.Messages) != 1 || got.Messages[0].Content.(*sdk.TextContent).Text != "Review this Rust code." {
		t.Errorf("get prompt: %v %+v", err, got)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) != 1 || res.Resources[0].URI != "memo://readme" {
		t.Errorf("resources: %v %+v", err, res)
	}
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "memo://{name}" {
		t.Errorf("resource templates: %v %+v", err, tmpl)
	}
	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "memo://readme"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "memo readme" {
		t.Errorf("read resource: %v %+v", err, read)
	}
	read, err = cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "memo://groceries"})
	if err != nil || len(read.Contents) != 1 || read.Contents[0].Text != "memo groceries" {
		t.Errorf("read through the template: %v %+v", err, read)
	}
	comp, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "review"},
		Argument: sdk.CompleteParamsArgument{Name: "language", Value: "g"}})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"go"}) {
		t.Errorf("complete: %v %+v", err, comp)
	}
}

// Our hyper-mcp plugins, v1 and v2 in Go and in Rust, are approved and
// called from the command line like any module.
func TestToolsCallHyperMCPPlugins(t *testing.T) {
	e := newCLIEnv(t)
	for _, f := range []string{"hypermcpv1go.wasm", "hypermcpv2go.wasm", "hypermcpv1rust.wasm", "hypermcpv2rust.wasm"} {
		e.add(f)
		e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, f), "--yes")
	}
	// Four plugins offer greet: a conflict, reported, and served by none.
	r := e.run("", "tools", "call", "greet", "--args", `{"name":"Ada"}`)
	if r.code == 0 || !strings.Contains(r.stderr+r.stdout, "greet") {
		t.Errorf("greet offered four times: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for _, f := range []string{"hypermcpv1go", "hypermcpv1rust", "hypermcpv2go"} {
		e.mustRun(0, "tools", "revoke", f)
	}
	r = e.mustRun(0, "tools", "call", "greet", "--args", `{"name":"Ada"}`)
	if !strings.Contains(r.stdout, "Hello, Ada!") {
		t.Errorf("tools call greet (Rust v2):\n%s", r.stdout)
	}
}

// TestPluginCatalogApprovedFirst: a quarantined drop-in offering an
// approved plugin's prompt and resources (found first in the directory)
// does not take them: each is served once, from the approved plugin (found
// by attacking our own sandbox: the drop-in's definitions were listed and
// prompts/get failed).
func TestPluginCatalogApprovedFirst(t *testing.T) {
	e := newCLIEnv(t)
	b, err := os.ReadFile(filepath.Join(e.testdata, "hypermcpv2rust.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.plugins, "zz_review.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustRun(0, "tools", "approve", filepath.Join(e.plugins, "zz_review.wasm"), "--grant", "clock", "--yes")
	if b, err = os.ReadFile(filepath.Join(e.testdata, "hypermcpv2go.wasm")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.plugins, "aa_drop.wasm"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	h, err := host.New(ctx, host.Options{PoolSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	d, err := plugindir.Open(ctx, h, plugindir.Options{Dir: e.plugins, Quarantine: true})
	if err != nil {
		t.Fatal(err)
	}
	snap := d.Snapshot()
	prompts, resources := pluginCatalog(snap)
	if len(prompts) != 1 || len(resources) != 2 {
		t.Fatalf("%d prompts and %d resources, want each served once: 1 and 2 (a resource and a template)", len(prompts), len(resources))
	}
	// Served from the approved plugin: with the drop-in closed, the prompt
	// still answers.
	for _, p := range snap.Plugins {
		if p.File == "aa_drop.wasm" {
			if p.Status != plugindir.StatusQuarantined || p.Loaded == nil {
				t.Fatalf("the drop-in: %v %v", p.Status, p.Err)
			}
			p.Loaded.Close(ctx)
		}
	}
	if _, err := prompts[0].Get(ctx, map[string]string{"language": "Go"}); err != nil {
		t.Errorf("the prompt, with the drop-in closed: %v", err)
	}
}
