package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY returns both ends of a new pseudo-terminal: what a person types
// goes into the controller, the command reads the terminal.
func openPTY(t *testing.T) (controller, term *os.File) {
	t.Helper()
	controller, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { controller.Close() })
	fd := int(controller.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	term, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { term.Close() })
	return controller, term
}

// On a terminal, approve shows what is granted and asks; only "y" or
// "yes" approves.
func TestToolsApproveAsksOnATerminal(t *testing.T) {
	e := newCLIEnv(t)
	kv := e.add("kv.wasm")
	for _, tt := range []struct {
		answer   string
		code     int
		approved bool
	}{
		{"n\n", 1, false},
		{"\n", 1, false},
		{"yes\n", 0, true},
	} {
		controller, term := openPTY(t)
		if _, err := controller.WriteString(tt.answer); err != nil {
			t.Fatal(err)
		}
		var out, errb strings.Builder
		code := run([]string{"tools", "approve", kv, "--grant", "kv:notes"}, term, &out, &errb)
		if code != tt.code {
			t.Errorf("answer %q: exit %d, want %d\n%s%s", tt.answer, code, tt.code, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), "grants:    kv:notes") || !strings.Contains(out.String(), "Approve these bytes with these grants? [y/N]") {
			t.Errorf("answer %q: the prompt did not show the grants:\n%s", tt.answer, out.String())
		}
		if got := e.loadManifest().Len() == 1; got != tt.approved {
			t.Errorf("answer %q: approved = %v, want %v", tt.answer, got, tt.approved)
		}
	}
}
