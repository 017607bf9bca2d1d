package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/autoagent-go/autoagent/internal/termtext"
	"github.com/autoagent-go/autoagent/loop"
)

// maxShownArguments is the size of arguments shown inline to a reviewer;
// larger ones are written whole to a file the reviewer is pointed at, so
// nothing of a call is ever hidden behind a cut.
const maxShownArguments = 8 << 10

// showPending tells a reviewer everything about a call awaiting a
// decision: the tool, the call's id (what --approve and --reject take),
// who asked (a tool's or a sub-agent's own call), why, the digest the
// decision is bound to, and the whole arguments, indented, with every
// character a terminal would act on escaped. Arguments over
// maxShownArguments are written to a file in dir (the state file's
// directory, or the temporary directory) and the file is named instead.
func showPending(w io.Writer, p loop.PendingCall, dir string) {
	fmt.Fprintf(w, "approval required: %s (call %s)\n", termtext.Name(p.Call.Name), termtext.Name(p.Call.ID))
	if p.Parent != "" {
		fmt.Fprintf(w, "  asked by:  the tool of call %s (a call it made itself)\n", termtext.Name(p.Parent))
	}
	fmt.Fprintf(w, "  why:       %s\n", termtext.Name(p.Reason))
	fmt.Fprintf(w, "  digest:    %s (the decision applies to this exact call only)\n", p.Digest())
	args := indentArguments(p.Call.Arguments)
	if len(args) > maxShownArguments {
		path, err := writeArguments(dir, p, args)
		if err != nil {
			fmt.Fprintf(w, "  arguments: %d bytes, too long to show here and not written to a file (%v): do not approve what you have not read\n", len(args), err)
			return
		}
		fmt.Fprintf(w, "  arguments: %d bytes, written whole to %s: read them there before deciding\n", len(args), termtext.Name(path))
		return
	}
	fmt.Fprintln(w, "  arguments:")
	for _, line := range strings.Split(args, "\n") {
		fmt.Fprintf(w, "    %s\n", termtext.Name(line))
	}
}

// indentArguments is the arguments as indented JSON (as they are when they
// are not JSON).
func indentArguments(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return string(raw)
	}
	return b.String()
}

// writeArguments writes a call's arguments to a new file in dir and returns
// its path.
func writeArguments(dir string, p loop.PendingCall, args string) (string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	f, err := os.CreateTemp(dir, "approval-"+p.Digest()[:12]+"-*.json")
	if err != nil {
		return "", err
	}
	if _, err := f.WriteString(args + "\n"); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return filepath.Abs(f.Name())
}

// decidableIDs are the ids --approve and --reject take for st: the
// pending turn's calls and the calls tools or sub-agents made that await
// a decision.
func decidableIDs(st *loop.RunState) []string {
	var ids []string
	for _, c := range st.DecidableCalls() {
		ids = append(ids, c.ID)
	}
	return ids
}
