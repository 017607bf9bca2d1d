package conformance_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExtismJS runs the Go-PDK word_count module in the official Extism
// JavaScript host (npm @extism/extism on Node) over every conformance case:
// the module must answer exactly as it does in the autoagent host, which
// shows the PDK speaks the Extism ABI and nothing private to autoagent.
func TestExtismJS(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the Extism JavaScript host cannot run (install Node 20 and run `make deps`)")
	}
	if _, err := os.Stat(filepath.Join("node", "node_modules", "@extism", "extism")); err != nil {
		t.Skip("@extism/extism is not installed: run `make deps` (.ci/install.d/pdk.sh installs it into pdk/conformance/node)")
	}
	wasm := modulePath(t, "go")
	cases := append(loadCases(t), generatedCases()...)
	var script bytes.Buffer
	line := func(fn string, input []byte) {
		b, _ := json.Marshal(map[string]string{"fn": fn, "input": base64.StdEncoding.EncodeToString(input)})
		script.Write(append(b, '\n'))
	}
	line("describe", nil)
	for _, c := range cases {
		line("call", c.input)
	}
	casesFile := filepath.Join(t.TempDir(), "cases.jsonl")
	if err := os.WriteFile(casesFile, script.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--no-warnings", filepath.Join("node", "run.mjs"), wasm, casesFile)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(cases)+1 {
		t.Fatalf("node printed %d lines for %d calls:\n%s\n%s", len(lines), len(cases)+1, out, stderr.String())
	}
	decode := func(i int) []byte {
		if strings.HasPrefix(lines[i], "error: ") {
			t.Errorf("call %d failed in the Extism JS host: %s", i, lines[i])
			return nil
		}
		b, err := base64.StdEncoding.DecodeString(lines[i])
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		return b
	}
	if got, want := decode(0), describeDoc(t); !bytes.Equal(got, want) {
		t.Errorf("describe:\n got %s\nwant %s", got, want)
	}
	for i, c := range cases {
		if got := decode(i + 1); !bytes.Equal(got, c.output) {
			t.Errorf("case %s:\n got %.300s\nwant %.300s", c.name, got, c.output)
		}
	}
}
