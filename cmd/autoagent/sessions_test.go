package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runProcess runs the command in a process of its own (the test binary
// as autoagent), in the test's directory.
func (e *cliEnv) runProcess(stdin string, args ...string) result {
	e.t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), cliMainEnv+"=1")
	cmd.Dir = e.root
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// chat --session keeps the conversation in the store: a second process
// continues it, its model sees the first process's turn, and the store
// holds both turns.
func TestChatSessionContinuesInASecondProcess(t *testing.T) {
	e := newCLIEnv(t)
	script := e.writeScript(`{"text":"First."}`, `{"text":"Second."}`)
	r := e.runProcess("hello\n", "chat", "--provider", "scripted", "--script", script, "--session", "trip")
	if r.code != 0 || r.stdout != "First.\n" {
		t.Fatalf("first process: exit %d, stdout %q, stderr %s", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.root, "sessions.db")); err != nil {
		t.Fatalf("no store in the working directory: %v", err)
	}
	r = e.runProcess("again\n", "chat", "--provider", "scripted", "--script", script, "--session", "trip", "--json")
	if r.code != 0 {
		t.Fatalf("second process: exit %d: %s", r.code, r.stderr)
	}
	turn := decodeRunJSON(t, strings.TrimSpace(r.stdout))
	// The scripted model plays the turn after the assistant messages it
	// is sent: "Second." only if the first turn came back from the store.
	if turn.Output != "Second." || len(turn.Messages) != 5 || turn.Messages[1].Parts[0].Text != "hello" || turn.Messages[2].Parts[0].Text != "First." {
		t.Fatalf("second turn: %s", r.stdout)
	}
	show := e.run("", "sessions", "show", "trip", "--json")
	if show.code != 0 {
		t.Fatalf("sessions show: %d %s", show.code, show.stderr)
	}
	var entries []struct {
		Seq     int64 `json:"seq"`
		Message struct {
			Role  string `json:"role"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"message"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &entries); err != nil {
		t.Fatalf("show --json: %v\n%s", err, show.stdout)
	}
	var got []string
	for _, en := range entries {
		got = append(got, en.Message.Role+":"+en.Message.Parts[0].Text)
	}
	if strings.Join(got, "|") != "user:hello|assistant:First.|user:again|assistant:Second." {
		t.Errorf("the store holds %q", got)
	}
	// /reset cannot drop a stored conversation silently.
	r = e.run("/reset\n", "chat", "--provider", "scripted", "--script", script, "--session", "trip")
	if r.code != 0 || !strings.Contains(r.stderr, "/reset does not apply to session trip") {
		t.Errorf("/reset in a session: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestSessionsVerbs(t *testing.T) {
	e := newCLIEnv(t)
	script := e.writeScript(`{"text":"The flight to Lisbon is at nine."}`, `{"text":"Noted."}`)
	if r := e.run("when do we fly to Lisbon?\nthanks\n", "chat", "--provider", "scripted", "--script", script, "--session", "trip", "--user", "ada"); r.code != 0 {
		t.Fatalf("chat: %d %s", r.code, r.stderr)
	}
	r := e.mustRun(0, "sessions", "list", "--user", "ada")
	if !strings.Contains(r.stdout, "ada/trip") || !strings.Contains(r.stdout, "4") {
		t.Errorf("list: %q", r.stdout)
	}
	if r := e.mustRun(0, "sessions", "list"); !strings.Contains(r.stdout, "no sessions") {
		t.Errorf("list without --user shows another scope: %q", r.stdout)
	}
	r = e.mustRun(0, "sessions", "search", "lisbon", "--user", "ada", "--json")
	var hits []struct {
		User    string  `json:"user"`
		Session string  `json:"session"`
		Seq     int64   `json:"seq"`
		Score   float64 `json:"score"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil || len(hits) != 2 || hits[0].Session != "trip" || hits[0].Score <= 0 {
		t.Fatalf("search --json: %v %s", err, r.stdout)
	}
	e.mustRun(0, "sessions", "fork", "trip", "alt", "--at", "2", "--user", "ada")
	r = e.mustRun(0, "sessions", "show", "alt", "--user", "ada")
	if strings.Count(r.stdout, "\n") != 2 || !strings.Contains(r.stdout, "#2 assistant: The flight to Lisbon is at nine.") {
		t.Errorf("show of the fork: %q", r.stdout)
	}
	if r := e.run("", "sessions", "fork", "trip", "alt", "--user", "ada"); r.code != 1 || !strings.Contains(r.stderr, "exists") {
		t.Errorf("fork onto an existing session: %d %q", r.code, r.stderr)
	}
	e.mustRun(0, "sessions", "prune", "--keep-last", "1", "--user", "ada", "--session", "trip")
	if r := e.mustRun(0, "sessions", "show", "trip", "--user", "ada"); !strings.HasPrefix(r.stdout, "#4 assistant: Noted.") {
		t.Errorf("after prune: %q", r.stdout)
	}
	e.mustRun(0, "sessions", "rm", "alt", "trip", "--user", "ada")
	if r := e.run("", "sessions", "show", "trip", "--user", "ada"); r.code != 1 || !strings.Contains(r.stderr, "no such session") {
		t.Errorf("show after rm: %d %q", r.code, r.stderr)
	}
	if r := e.run("", "sessions", "prune"); r.code != 2 {
		t.Errorf("prune without a rule: exit %d", r.code)
	}
	if r := e.run("", "chat", "--provider", "scripted", "--script", script, "--session", "bad\x01name"); r.code != 2 {
		t.Errorf("chat with an invalid session name: exit %d %q", r.code, r.stderr)
	}
}
