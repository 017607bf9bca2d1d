package host

import (
	"testing"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
	"github.com/autoagent-go/autoagent/manifest"
)

// TestDefaultLimitsCannotBeChanged: the defaults are a function's result,
// a copy: code that changes what it got does not change the limits of
// the Hosts made afterwards, and a Host fills its zero fields from them.
func TestDefaultLimitsCannotBeChanged(t *testing.T) {
	d := manifest.DefaultLimits()
	if d.Memory != 64<<20 || d.Output != 1<<20 || d.ErrorText != 64<<10 {
		t.Fatalf("DefaultLimits = %+v, want the documented 64 MiB memory, 1 MiB output, 64 KiB error text", d)
	}
	d.Memory, d.Timeout = 1, 1
	h, _ := newTestHost(t, Options{Limits: Limits{Output: 4096}})
	got := h.Limits()
	if got.Memory != 64<<20 || got.Timeout != manifest.DefaultLimits().Timeout {
		t.Fatalf("a Host made after its caller changed a copy of the defaults has %+v", got)
	}
	if got.Output != 4096 {
		t.Fatalf("Options.Limits.Output 4096 became %d", got.Output)
	}
}

// TestLimitErrorNamesEveryLimit: every limit a capability can end a call
// with has a value in Limits, formatted as the limit's own error shows it.
func TestLimitErrorNamesEveryLimit(t *testing.T) {
	l := manifest.DefaultLimits()
	for name, want := range map[string]string{
		LimitMemory: "64 MiB", LimitTime: "10s", LimitOutput: "1 MiB", LimitHTTPResponse: "4 MiB",
		LimitHTTPRequest: "4 MiB", LimitKVValue: "1 MiB", LimitKVNamespace: "64 MiB", LimitStack: "8 MiB",
		LimitTables: "1048576 entries", LimitCallDepth: "4", LimitCallTreeMemory: "256 MiB", LimitFSWrite: "256 MiB",
		LimitOpenFiles: "256 files", LimitKVWrite: "64 MiB",
	} {
		if e := limitError(l, name); e.Limit != name || e.Value != want {
			t.Errorf("limitError(%q) = %+v, want the value %q", name, e, want)
		}
	}
}

// TestLimitNamesAgree: the capabilities name each limit as the host's
// LimitError does.
func TestLimitNamesAgree(t *testing.T) {
	for host, cap := range map[string]string{
		LimitMemory: hostcall.LimitMemory, LimitTime: hostcall.LimitTime, LimitOutput: hostcall.LimitOutput,
		LimitHTTPResponse: hostcall.LimitHTTPResponse, LimitKVValue: hostcall.LimitKVValue,
		LimitHTTPRequest: hostcall.LimitHTTPRequest, LimitKVNamespace: hostcall.LimitKVNamespace,
		LimitStack: hostcall.LimitStack, LimitTables: hostcall.LimitTables, LimitCallDepth: hostcall.LimitCallDepth,
		LimitCallTreeMemory: hostcall.LimitCallTreeMemory, LimitFSWrite: hostcall.LimitFSWrite,
		LimitOpenFiles: hostcall.LimitOpenFiles, LimitKVWrite: hostcall.LimitKVWrite,
	} {
		if host != cap {
			t.Errorf("the host names a limit %q, the capabilities %q", host, cap)
		}
	}
}
