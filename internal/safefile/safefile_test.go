package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/testsys"
)

func TestReadRegular(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.wasm")
	if err := os.WriteFile(p, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := Read(p, 0); err != nil || string(b) != "hello" {
		t.Fatalf("Read = %q, %v", b, err)
	}
	if _, err := Read(p, 4); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read with a 4-byte cap: %v, want ErrTooLarge", err)
	}
	if _, err := Read(filepath.Dir(p), 0); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Read of a directory: %v, want ErrNotRegular", err)
	}
}

// TestReadFIFO: a FIFO nobody writes to is refused at once, where
// os.ReadFile would block forever.
func TestReadFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "trap.wasm")
	if err := testsys.Mkfifo(p); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := Read(p, 1<<20); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNotRegular) || err.Error() != "open "+p+": not a regular file (a FIFO)" {
			t.Fatalf("Read of a FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read blocked on a FIFO")
	}
}

func TestReadDevice(t *testing.T) {
	if _, err := Read("/dev/zero", 1<<20); !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Read of /dev/zero: %v, want ErrNotRegular", err)
	}
}

// TestReadPseudoFS: files of /proc and /sys claim to be regular but are
// not data at rest (a link named x.wasm to /proc/kmsg hung every load of
// a plugins directory when the host ran as root; found by attacking our
// own sandbox). They are refused, also through a link.
func TestReadPseudoFS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux's pseudo file systems")
	}
	link := filepath.Join(t.TempDir(), "x.wasm")
	if err := os.Symlink("/proc/self/status", link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/proc/self/status", "/sys/kernel/uevent_seqnum", link} {
		if _, err := os.Stat(p); err != nil {
			t.Logf("%s: %v", p, err)
			continue
		}
		_, err := Read(p, 1<<20)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a file of ") {
			t.Errorf("Read(%s): %v, want ErrNotRegular naming the file system", p, err)
		}
	}
}

// TestReadPrefixed: a file with the prefix reads whole; one without is
// refused with ErrPrefix, and one shorter than the prefix too.
func TestReadPrefixed(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if b, err := ReadPrefixed(write("good", "MAGICbody"), 100, []byte("MAGIC")); err != nil || string(b) != "MAGICbody" {
		t.Errorf("good: %q, %v", b, err)
	}
	for _, c := range []string{"WRONGbody", "MAG", ""} {
		if _, err := ReadPrefixed(write("bad", c), 100, []byte("MAGIC")); !errors.Is(err, ErrPrefix) {
			t.Errorf("%q: %v, want ErrPrefix", c, err)
		}
	}
	if _, err := ReadPrefixed(write("big", "MAGIC"+strings.Repeat("x", 100)), 100, []byte("MAGIC")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("past the cap: %v, want ErrTooLarge", err)
	}
}
