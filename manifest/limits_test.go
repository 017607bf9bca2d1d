package manifest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// everyLimit sets every field of Limits to a value of its own, none the
// default, so a field the JSON form forgets shows as a difference.
var everyLimit = Limits{
	Memory: 32 << 20, Timeout: 1500 * time.Millisecond, Output: 1001, HTTPResponse: 1002,
	KVValue: 1003, HTTPRequest: 1004, KVNamespace: 1005, Stack: 1006, Tables: 1007,
	ErrorText: 1008, CallDepth: 9, CallTreeMemory: 1010, OpenFiles: 11, FSWrite: 1012,
}

// TestLimitsJSONKeepsTheOriginalForm: the four limits of the first
// manifest format are written as it wrote them (the example of
// docs/ARCHITECTURE.md §5), so manifests and audit records an older
// autoagent hashed read back the same.
func TestLimitsJSONKeepsTheOriginalForm(t *testing.T) {
	for _, c := range []struct {
		l    Limits
		want string
	}{
		{Limits{Memory: 64 << 20, Timeout: 5 * time.Second}, `{"memory_mb":64,"timeout_ms":5000}`},
		{Limits{Output: 4096, HTTPResponse: 1 << 20}, `{"output_bytes":4096,"http_response_bytes":1048576}`},
		{Limits{}, `{}`},
		// Not a whole MiB: in bytes. A time limit rounds up to the millisecond.
		{Limits{Memory: 96 << 10, Timeout: 1500 * time.Microsecond}, `{"timeout_ms":2,"memory_bytes":98304}`},
		{Limits{Stack: 1 << 20, CallDepth: 2}, `{"stack_bytes":1048576,"call_depth":2}`},
	} {
		b, err := json.Marshal(c.l)
		if err != nil || string(b) != c.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", c.l, b, err, c.want)
		}
	}
}

// TestLimitsJSONRoundTrip: every limit survives the JSON form and an
// approval written to the manifest and read back.
func TestLimitsJSONRoundTrip(t *testing.T) {
	b, err := json.Marshal(everyLimit)
	if err != nil {
		t.Fatal(err)
	}
	var got Limits
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got != everyLimit {
		t.Fatalf("round trip of %s:\n got %+v\nwant %+v", b, got, everyLimit)
	}
	store := &Store{Path: filepath.Join(t.TempDir(), "manifest.json")}
	sum := Sum([]byte("module"))
	if _, err := store.Approve(context.Background(), Approval{SHA256: sum, File: "m.wasm", Limits: everyLimit, By: "alice"}); err != nil {
		t.Fatal(err)
	}
	m, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := m.Lookup(sum); !ok || e.Limits != everyLimit {
		t.Fatalf("the manifest gave back %+v, want %+v", e.Limits, everyLimit)
	}
}

// TestLimitsJSONRefusesBadInput: unknown keys, values past what the
// limits can hold, and both forms of the memory limit are errors.
func TestLimitsJSONRefusesBadInput(t *testing.T) {
	for doc, want := range map[string]string{
		`{"memory_gb":1}`:                      "unknown field",
		`{"memory_mb":4097}`:                   "memory_mb 4097",
		`{"memory_mb":1,"memory_bytes":65536}`: "set one of them",
		`{"timeout_ms":9223372036855}`:         "timeout_ms",
		`{"call_depth":4294967296}`:            "call_depth",
		`{"kv_value_bytes":-1}`:                "negative kv value limit -1 (kv_value_bytes)",
		`{"memory_mb":"64"}`:                   "cannot unmarshal string",
	} {
		var l Limits
		err := json.Unmarshal([]byte(doc), &l)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Unmarshal(%s) = %v, want an error containing %q", doc, err, want)
		}
	}
}
