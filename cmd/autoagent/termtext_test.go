package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileName is a module file name that attacks a terminal: it clears
// the screen, sets the window title, forges a line of the start-up
// report, and reverses what follows.
const hostileName = "evil\x1b[2J\x1b]0;pwned\x07\nstatus:    approved\u202egnp.wasm"

// rawTerminalText returns what of out a terminal would obey or a reader
// would take for the CLI's own line: an escape, a C1 control, a
// direction override, a forged line.
func rawTerminalText(out string) string {
	for _, bad := range []string{"\x1b", "\u009b", "\u0085", "\u202e", "\x07"} {
		if strings.Contains(out, bad) {
			return bad
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "status:    approved") {
			return line
		}
	}
	return ""
}

// No command prints a raw escape, C1 control or direction override from
// a module (its file name, its describe document, its results), a
// manifest (a note, an approver), a config (a plugin's name) or a model
// (its answer), nor lets a name forge a line of its own (the red team of
// issue 38: escape sequences in a module's file name or describe reached
// the operator's terminal raw through the start-up report of run, chat
// and mcp serve).
func TestNoRawTerminalText(t *testing.T) {
	e := newCLIEnv(t)
	e.ownTrust()
	echo := mustRead(t, filepath.Join(e.testdata, "echo.wasm"))
	if err := os.WriteFile(filepath.Join(e.plugins, hostileName), echo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A module whose describe (a sidecar) carries escapes in its tool's
	// description, approved with a hostile note and approver.
	hostile := filepath.Join(e.plugins, "hostile.wasm")
	if err := os.WriteFile(hostile, echo, 0o644); err != nil {
		t.Fatal(err)
	}
	side := `{"tools":[{"name":"echo","description":"\u001b[31mred\u001b]8;;http://x.example\u0007 \u009b2J\u202eoverride","inputSchema":{"type":"object"}}]}`
	if err := os.WriteFile(filepath.Join(e.plugins, "hostile.tool.json"), []byte(side), 0o644); err != nil {
		t.Fatal(err)
	}
	answer := `{"text":"the answer \u001b]52;c;cHduZWQ=\u0007 \u009b31m\u202e"}`
	script := e.writeScript(`{"tool_calls":[{"id":"c1","name":"echo","arguments":{"msg":"\u001b[2J\u009b"}}]}`, answer)
	cfg := filepath.Join(e.root, "config.yaml")
	if err := os.WriteFile(cfg, []byte("plugins:\n  \"evil\\e[2J\":\n    path: ./hostile.wasm\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(e.root, "trace.jsonl")
	sessions := filepath.Join(e.root, "sessions.db")

	commands := [][]string{
		{"tools", "list"},
		{"tools", "inspect", hostile},
		{"tools", "inspect", filepath.Join(e.plugins, hostileName)},
		{"tools", "approve", hostile, "--yes", "--note", "\x1b[2Jnote\u202e", "--by", "\x1b]0;x\x07me"},
		{"tools", "list"},
		{"tools", "trust", "--yes"},
		{"tools", "verify"},
		// Raw C1 and override characters in the arguments, which the
		// module echoes: JSON output leaves them as they are.
		{"tools", "call", "echo", "--args", "{\"msg\":\"\\u001b[2J \u009b2J \u0085 \u202e\"}"},
		{"tools", "call", "no\x1b[2Jsuch", "--args", `{}`},
		{"tools", "import", cfg},
		{"run", "--provider", "scripted", "--script", script, "--trace", trace, "go"},
		{"run", "--provider", "scripted", "--script", script, "--stream", "go"},
		{"run", "--provider", "scripted", "--script", script, "--json", "go"},
		{"chat", "--provider", "scripted", "--script", script, "--session", "s", "--sessions", sessions},
		{"sessions", "show", "s", "--sessions", sessions},
		{"trace", "summarize", trace},
		{"mcp", "serve"},
		{"tools", "revoke", "hostile"},
	}
	for _, args := range commands {
		r := e.run("go\n", args...)
		if bad := rawTerminalText(r.stdout + r.stderr); bad != "" {
			t.Errorf("autoagent %q (exit %d) printed %q raw:\nstdout: %q\nstderr: %q", args, r.code, bad, r.stdout, r.stderr)
		}
	}
}
