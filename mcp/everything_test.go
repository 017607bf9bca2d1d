package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

// nodePackages is where .ci/install.d/mcp.sh installs the npm packages the
// tests run (see testdata/node/package.json).
const nodePackages = "testdata/node/node_modules/@modelcontextprotocol"

// nodeScript returns the node binary and the absolute path of a file of
// an installed npm package, skipping the test when either is missing.
func nodeScript(t *testing.T, rel string) (node, script string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: run .ci/install.d/mcp.sh (or `make deps`) to run the MCP interoperability tests")
	}
	script, err = filepath.Abs(filepath.Join(nodePackages, rel))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("%s is not installed: run .ci/install.d/mcp.sh (or `make deps`) to run the MCP interoperability tests", rel)
	}
	return node, script
}

// everything starts the official reference server,
// @modelcontextprotocol/server-everything, on stdio.
func everything(t *testing.T, opts mcp.ClientOptions) *mcp.Client {
	t.Helper()
	node, script := nodeScript(t, "server-everything/dist/index.js")
	opts.Command = []string{node, script, "stdio"}
	c, err := mcp.Connect(context.Background(), opts)
	if err != nil {
		t.Fatalf("Connect to server-everything: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

// everythingHTTP starts the reference server on streamable HTTP, on a
// free loopback port.
func everythingHTTP(t *testing.T, opts mcp.ClientOptions) *mcp.Client {
	t.Helper()
	node, script := nodeScript(t, "server-everything/dist/index.js")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(node, script, "streamableHttp")
	cmd.Env = append(os.Environ(), "PORT="+port)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "listening on port") {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("server-everything streamableHttp exited before listening")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server-everything streamableHttp did not listen within 30s")
	}
	opts.URL = "http://127.0.0.1:" + port + "/mcp"
	c, err := mcp.Connect(context.Background(), opts)
	if err != nil {
		t.Fatalf("Connect to server-everything over HTTP: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func TestReferenceServerEverything(t *testing.T) {
	t.Setenv("AUTOAGENT_TEST_SECRET", "s3cret")
	c := everything(t, mcp.ClientOptions{Env: []string{"GREETING=hi"}})
	if info := c.ServerInfo(); info.Name != "mcp-servers/everything" || info.ProtocolVersion != "2025-11-25" {
		t.Errorf("ServerInfo = %+v", info)
	}
	names := toolNames(c.Tools())
	for _, want := range []string{"echo", "get-sum", "get-env", "get-tiny-image", "get-structured-content", "get-resource-reference", "get-resource-links"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tool %s is not mounted; tools: %v", want, names)
		}
	}
	get := func(name string) tool.Tool {
		tl, _ := c.Tool(name)
		return tl
	}

	t.Run("text", func(t *testing.T) {
		if res := mustCall(t, get("echo"), `{"message":"héllo"}`); res.IsError || res.Text() != "Echo: héllo" {
			t.Errorf("echo = %+v", res)
		}
		if res := mustCall(t, get("get-sum"), `{"a":2,"b":40}`); res.Text() != "The sum of 2 and 40 is 42." {
			t.Errorf("get-sum = %+v", res)
		}
	})
	t.Run("the server's schema validates arguments locally", func(t *testing.T) {
		res := mustCall(t, get("get-sum"), `{"a":"two","b":40}`)
		if !res.IsError || !strings.Contains(res.Text(), "a") {
			t.Errorf("get-sum with a string: %+v, want a local validation error", res)
		}
		res = mustCall(t, get("get-resource-links"), `{"count":11}`)
		if !res.IsError || !strings.Contains(res.Text(), "count") {
			t.Errorf("get-resource-links above its maximum: %+v, want a local validation error", res)
		}
	})
	t.Run("image", func(t *testing.T) {
		res := mustCall(t, get("get-tiny-image"), `{}`)
		var img *tool.Content
		for i := range res.Content {
			if res.Content[i].Type == "image" {
				img = &res.Content[i]
			}
		}
		if img == nil || img.MIMEType != "image/png" {
			t.Fatalf("get-tiny-image = %+v", res)
		}
		data, err := base64.StdEncoding.DecodeString(img.Data)
		if err != nil || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("the image is not a PNG after the round trip: %v", err)
		}
	})
	t.Run("structured content and output schema", func(t *testing.T) {
		tl := get("get-structured-content")
		if len(tl.Spec().OutputSchema) == 0 {
			t.Errorf("the tool's output schema was not mounted")
		}
		res := mustCall(t, tl, `{"location":"Chicago"}`)
		var got struct {
			Temperature float64 `json:"temperature"`
			Conditions  string  `json:"conditions"`
		}
		if err := json.Unmarshal(res.StructuredContent, &got); err != nil || got.Temperature != 36 || got.Conditions == "" {
			t.Errorf("structured content %s: %+v, %v", res.StructuredContent, got, err)
		}
		if res := mustCall(t, tl, `{"location":"Paris"}`); !res.IsError {
			t.Errorf("a value outside the enum was accepted: %+v", res)
		}
	})
	t.Run("embedded resources and resource links keep their data", func(t *testing.T) {
		// The model reads text; the result keeps every item typed.
		res := mustCall(t, get("get-resource-reference"), `{"resourceType":"Text","resourceId":2}`)
		if !strings.Contains(res.Text(), "Resource 2: This is a plaintext resource") {
			t.Errorf("get-resource-reference = %q", res.Text())
		}
		i := slices.IndexFunc(res.Content, func(c tool.Content) bool { return c.Type == "resource" })
		if i < 0 || res.Content[i].URI == "" || !strings.Contains(res.Content[i].Text, "plaintext resource") {
			t.Errorf("no typed embedded text resource: %+v", res.Content)
		}
		res = mustCall(t, get("get-resource-reference"), `{"resourceType":"Blob","resourceId":1}`)
		if !strings.Contains(res.Text(), "bytes of binary data") {
			t.Errorf("a binary resource = %q, want a note naming it", res.Text())
		}
		i = slices.IndexFunc(res.Content, func(c tool.Content) bool { return c.Type == "resource" })
		if i < 0 {
			t.Fatalf("no typed embedded blob: %+v", res.Content)
		}
		if blob, err := base64.StdEncoding.DecodeString(res.Content[i].Data); err != nil || len(blob) == 0 || res.Content[i].URI == "" {
			t.Errorf("the blob's bytes are lost: %+v (%v)", res.Content[i], err)
		}
		res = mustCall(t, get("get-resource-links"), `{"count":2}`)
		if strings.Count(res.Text(), "[resource link ") != 2 {
			t.Errorf("get-resource-links = %q, want two links", res.Text())
		}
		links := 0
		for _, c := range res.Content {
			if c.Type == "resource_link" && c.URI != "" && c.Name != "" {
				links++
			}
		}
		if links != 2 {
			t.Errorf("typed resource links: %+v", res.Content)
		}
	})
	t.Run("environment", func(t *testing.T) {
		env := mustCall(t, get("get-env"), `{}`).Text()
		if strings.Contains(env, "s3cret") || !strings.Contains(env, `"GREETING": "hi"`) {
			t.Errorf("the server's environment holds a variable it was not given, or lacks one it was:\n%s", env)
		}
	})
	t.Run("untrusted by default", func(t *testing.T) {
		if f := tool.FlagsOf(get("echo")); !f.Untrusted || f.Idempotent {
			t.Errorf("flags = %+v: a server's annotations must not relax the defaults", f)
		}
	})
}

func TestReferenceServerTrustedAnnotations(t *testing.T) {
	c := everything(t, mcp.ClientOptions{Trusted: true, Prefix: "ev_"})
	echo, ok := c.Tool("ev_echo")
	if !ok {
		t.Fatalf("tools = %v", toolNames(c.Tools()))
	}
	// echo says readOnlyHint, idempotentHint and openWorldHint false.
	if f := tool.FlagsOf(echo); f.Untrusted || !f.Idempotent {
		t.Errorf("flags = %+v, want trusted and idempotent from the annotations", f)
	}
	if res := mustCall(t, echo, `{"message":"x"}`); res.Text() != "Echo: x" {
		t.Errorf("ev_echo = %+v", res)
	}
}

// A tool whose taskSupport is "required" (MCP tasks, 2025-11-25) runs as a
// task: created, polled and read; a cancelled call cancels the task.
func TestReferenceServerTasks(t *testing.T) {
	t.Parallel()
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		testTasks(t, everything(t, mcp.ClientOptions{}))
	})
	t.Run("streamable-http", func(t *testing.T) {
		t.Parallel()
		testTasks(t, everythingHTTP(t, mcp.ClientOptions{}))
	})
}

func testTasks(t *testing.T, c *mcp.Client) {
	research, ok := c.Tool("simulate-research-query")
	if !ok {
		t.Fatalf("no simulate-research-query: %v", toolNames(c.Tools()))
	}
	start := time.Now()
	res := mustCall(t, research, `{"topic":"wasm"}`)
	if res.IsError || !strings.Contains(res.Text(), "# Research Report: wasm") {
		t.Fatalf("the task's result: %+v", res)
	}
	if d := time.Since(start); d < 3*time.Second {
		t.Errorf("the task ended after %v: its four stages take a second each", d)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	res, err := research.Call(ctx, tool.Call{Arguments: json.RawMessage(`{"topic":"slow"}`)})
	if !errors.Is(err, context.DeadlineExceeded) || !res.IsError || !strings.Contains(res.Text(), "cancelled (task ") {
		t.Fatalf("a call cut short: %+v, %v", res, err)
	}
	id := strings.TrimSuffix(res.Text()[strings.Index(res.Text(), "(task ")+len("(task "):], ")")
	if st, err := mcp.TaskStatus(t.Context(), c, id); err != nil || st != "cancelled" {
		t.Errorf("the server's task %s after the cancelled call: %q, %v", id, st, err)
	}
	// The session still serves other calls.
	echo, _ := c.Tool("echo")
	if res := mustCall(t, echo, `{"message":"still here"}`); !strings.Contains(res.Text(), "still here") {
		t.Errorf("echo after the task: %+v", res)
	}
}
