package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/testsys"
)

// conformanceSuite returns node and the entry point of the MCP conformance
// suite (@modelcontextprotocol/conformance, installed by
// .ci/install.d/mcp.sh), skipping the test when either is missing.
func conformanceSuite(t *testing.T) (node, suite string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: run .ci/install.d/mcp.sh (or `make deps`) to run the MCP conformance suite")
	}
	suite, err = filepath.Abs("../../mcp/testdata/node/node_modules/@modelcontextprotocol/conformance/dist/index.js")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(suite); err != nil {
		t.Skip("@modelcontextprotocol/conformance is not installed: run .ci/install.d/mcp.sh (or `make deps`) to run the MCP conformance suite")
	}
	return node, suite
}

// conformanceModule copies the sandboxed module that offers the tools the
// suite's tool scenarios call (src, mcp/testdata/conformance, built from
// its C source) into dir, with its describe sidecar.
func conformanceModule(t *testing.T, src, dir string) string {
	t.Helper()
	for _, f := range []string{"conformance.wasm", "conformance.tool.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "conformance.wasm")
}

// conformanceCheck is one check of the suite's checks.json.
type conformanceCheck struct {
	ID           string `json:"id"`
	Description  string `json:"description"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, INFO
	ErrorMessage string `json:"errorMessage"`
}

// TestMCPServeConformance runs the server scenarios of the official MCP
// conformance suite that apply to a server offering tools (no resources,
// prompts, completion, logging, sampling or elicitation) against
// `autoagent mcp serve --http`, with a real sandboxed module behind the
// tools. Scenarios needing resource content in tool results
// (tools-call-embedded-resource, tools-call-mixed-content) do not apply:
// the WASM tool ABI flattens resources to text.
func TestMCPServeConformance(t *testing.T) {
	node, suite := conformanceSuite(t)
	src, err := filepath.Abs("../../mcp/testdata/conformance")
	if err != nil {
		t.Fatal(err)
	}
	e := newCLIEnv(t)
	module := conformanceModule(t, src, e.plugins)
	e.mustRun(0, "tools", "approve", module, "--yes")
	s := startServe(t, "--http", "127.0.0.1:0")
	url := s.waitLine(`over MCP at (http://\S+/mcp)`)[1]

	for _, scenario := range []string{
		"server-initialize", "ping", "tools-list",
		"tools-call-simple-text", "tools-call-image", "tools-call-audio", "tools-call-error",
		"json-schema-2020-12", "server-sse-multiple-streams", "dns-rebinding-protection",
	} {
		t.Run(scenario, func(t *testing.T) {
			results := t.TempDir()
			cmd := exec.Command(node, suite, "server", "--url", url, "--scenario", scenario, "-o", results)
			cmd.Dir = e.root
			out, err := cmd.CombinedOutput()
			checks := readChecks(t, results)
			if len(checks) == 0 {
				t.Fatalf("the suite ran no check (%v):\n%s", err, out)
			}
			for _, c := range checks {
				t.Logf("%-8s %s: %s %s", c.Status, c.ID, c.Description, c.ErrorMessage)
				if c.Status == "FAILURE" {
					t.Errorf("check %s failed: %s", c.ID, c.ErrorMessage)
				}
			}
			if err != nil && !t.Failed() {
				t.Errorf("the suite exited with %v:\n%s", err, out)
			}
		})
	}

	if err := testsys.Terminate(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if code := s.exitCode(); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// readChecks reads the checks.json files the suite wrote under dir.
func readChecks(t *testing.T, dir string) []conformanceCheck {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	var all []conformanceCheck
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v\n%s", f, err, strings.TrimSpace(string(b)))
		}
		all = append(all, checks...)
	}
	return all
}
