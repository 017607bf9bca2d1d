package mcp_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

// conformanceClient is the client the MCP conformance suite drives (the
// test binary run with helperEnv=conformance-client): it connects to the
// URL the suite appends to the command, and does what the scenario named
// in MCP_CONFORMANCE_SCENARIO expects of a client that mounts tools.
func conformanceClient() int {
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := mcp.Connect(ctx, mcp.ClientOptions{URL: url})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer c.Close()
	call := func(name, args string) int {
		tl, ok := c.Tool(name)
		if !ok {
			fmt.Fprintf(os.Stderr, "tool %s is not mounted\n", name)
			return 1
		}
		res, err := tl.Call(ctx, tool.Call{Arguments: json.RawMessage(args)})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(res.Text())
		return 0
	}
	switch scenario {
	case "tools_call":
		return call("add_numbers", `{"a":5,"b":3}`)
	case "sse-retry":
		return call("test_reconnection", `{}`)
	}
	return 0 // initialize: the handshake and the listing were the test
}

// TestClientConformance runs the client scenarios of the official MCP
// conformance suite that apply to a client mounting tools over streamable
// HTTP: the initialize handshake, a tool call, and resuming a tool call
// whose event stream the server closes (SEP-1699).
func TestClientConformance(t *testing.T) {
	node, suite := nodeScript(t, "conformance/dist/index.js")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, scenario := range []string{"initialize", "tools_call", "sse-retry"} {
		t.Run(scenario, func(t *testing.T) {
			results := t.TempDir()
			cmd := exec.Command(node, suite, "client", "--command", self, "--scenario", scenario, "-o", results)
			cmd.Dir = results
			cmd.Env = append(os.Environ(), helperEnv+"=conformance-client")
			out, err := cmd.CombinedOutput()
			files, _ := filepath.Glob(filepath.Join(results, "*", "checks.json"))
			var checks []struct {
				ID, Description, Status, ErrorMessage string
			}
			for _, f := range files {
				b, rerr := os.ReadFile(f)
				if rerr != nil {
					t.Fatal(rerr)
				}
				var cs []struct{ ID, Description, Status, ErrorMessage string }
				if jerr := json.Unmarshal(b, &cs); jerr != nil {
					t.Fatalf("%s: %v", f, jerr)
				}
				checks = append(checks, cs...)
			}
			scored := 0
			for _, c := range checks {
				if c.Status == "INFO" {
					continue
				}
				scored++
				t.Logf("%-8s %s: %s %s", c.Status, c.ID, c.Description, c.ErrorMessage)
				if c.Status == "FAILURE" {
					t.Errorf("check %s failed: %s", c.ID, c.ErrorMessage)
				}
			}
			if scored == 0 {
				t.Fatalf("the suite scored no check (%v):\n%s", err, out)
			}
			if err != nil && !t.Failed() {
				t.Errorf("the suite exited with %v:\n%s", err, out)
			}
		})
	}
}

// TestConformanceModuleUpToDate fails when the conformance module's C
// source changed without a rebuild (testdata/conformance/build.sh).
func TestConformanceModuleUpToDate(t *testing.T) {
	src, err := os.ReadFile("testdata/conformance/conformance.c")
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := os.ReadFile("testdata/conformance/conformance.wasm.src")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	if got := hex.EncodeToString(sum[:]); strings.TrimSpace(string(recorded)) != got {
		t.Errorf("conformance.c changed since conformance.wasm was built: run bash mcp/testdata/conformance/build.sh")
	}
}
