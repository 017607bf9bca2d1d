package manifest

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const (
	sumA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	sumB = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
)

func mustGrants(t testing.TB, ss ...string) []Grant {
	t.Helper()
	gs, err := ParseGrants(ss)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

func TestMarshalFormat(t *testing.T) {
	var m Manifest
	err := m.Put(Entry{
		SHA256: sumA, File: "fetch_url.wasm", Name: "fetch_url",
		Grants:     mustGrants(t, "net:api.example.com", "clock", "net:api.example.com"),
		Limits:     Limits{Memory: 64 << 20, Timeout: 5 * time.Second},
		ApprovedBy: "alice", ApprovedAt: time.Date(2026, 11, 29, 11, 0, 0, 500, time.FixedZone("CET", 3600)),
		Note: "reviewed <v1.2.0> & signed, café",
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Put(Entry{SHA256: sumB, File: "echo.wasm", Name: "echo", ApprovedBy: "bob", ApprovedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	got, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": 1,
  "tools": {
    "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752": {
      "file": "echo.wasm",
      "name": "echo",
      "grants": [],
      "approved_by": "bob",
      "approved_at": "2026-01-02T03:04:05Z"
    },
    "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08": {
      "file": "fetch_url.wasm",
      "name": "fetch_url",
      "grants": [
        "clock",
        "net:api.example.com"
      ],
      "limits": {
        "memory_mb": 64,
        "timeout_ms": 5000
      },
      "approved_by": "alice",
      "approved_at": "2026-11-29T10:00:00Z",
      "note": "reviewed <v1.2.0> & signed, café"
    }
  }
}
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("MarshalJSON (-want +got):\n%s", diff)
	}
	back, err := Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m.Entries(), back.Entries()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestParseDesignExample(t *testing.T) {
	// The example of docs/ARCHITECTURE.md §5, with a real hash in place of the
	// placeholder.
	doc := `{"version": 1,
 "tools": {"` + sumA + `": {"file": "fetch_url.wasm", "name": "fetch_url",
   "grants": ["net:api.example.com"], "limits": {"memory_mb": 64, "timeout_ms": 5000},
   "approved_by": "alice", "approved_at": "2026-11-29T10:00:00Z", "note": "..."}}}`
	m, err := Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := m.Lookup(sumA)
	if !ok {
		t.Fatalf("Lookup(%s) found nothing", sumA)
	}
	want := Entry{
		SHA256: sumA, File: "fetch_url.wasm", Name: "fetch_url",
		Grants: []Grant{{Kind: KindNet, Host: "api.example.com"}}, Limits: Limits{Memory: 64 << 20, Timeout: 5 * time.Second},
		ApprovedBy: "alice", ApprovedAt: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC), Note: "...",
	}
	if diff := cmp.Diff(want, e); diff != "" {
		t.Errorf("entry (-want +got):\n%s", diff)
	}
	if e.Limits.Timeout != 5*time.Second {
		t.Errorf("Timeout() = %v", e.Limits.Timeout)
	}
	if _, ok := m.Lookup(sumB); ok {
		t.Errorf("Lookup(%s) found an entry that is not there", sumB)
	}
}

func TestLookupByNameAndFile(t *testing.T) {
	var m Manifest
	day := func(d int) time.Time { return time.Date(2026, 1, d, 0, 0, 0, 0, time.UTC) }
	for _, e := range []Entry{
		{SHA256: sumB, File: "fetch.wasm", Name: "fetch", ApprovedBy: "a", ApprovedAt: day(2)},
		{SHA256: sumA, File: "fetch.wasm", Name: "fetch", ApprovedBy: "a", ApprovedAt: day(1)},
		{SHA256: Sum([]byte("x")), File: "echo.wasm", Name: "echo", ApprovedBy: "a", ApprovedAt: day(3)},
	} {
		if err := m.Put(e); err != nil {
			t.Fatal(err)
		}
	}
	sums := func(es []Entry) string {
		var s []string
		for _, e := range es {
			s = append(s, Short(e.SHA256))
		}
		return strings.Join(s, " ")
	}
	if got, want := sums(m.ByName("fetch")), Short(sumA)+" "+Short(sumB); got != want {
		t.Errorf("ByName(fetch) = %s, want %s (oldest first)", got, want)
	}
	if got, want := sums(m.ByFile("echo.wasm")), Short(Sum([]byte("x"))); got != want {
		t.Errorf("ByFile(echo.wasm) = %s, want %s", got, want)
	}
	if got := m.ByName("nope"); len(got) != 0 {
		t.Errorf("ByName(nope) = %v", got)
	}
	if m.Len() != 3 || len(m.Entries()) != 3 || m.Entries()[0].File != "echo.wasm" {
		t.Errorf("Entries() = %v", m.Entries())
	}
	// Entries hands out copies: changing one does not change the manifest.
	e, _ := m.Lookup(sumA)
	e.Grants = append(e.Grants, Grant{Kind: KindClock})
	if again, _ := m.Lookup(sumA); len(again.Grants) != 0 {
		t.Errorf("Lookup returned an alias of the stored grants")
	}
	if _, ok := m.Delete(sumA); !ok || m.Len() != 2 {
		t.Errorf("Delete(%s) did not remove it", sumA)
	}
}

func TestPutRefusesInvalidEntries(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ok := Entry{SHA256: sumA, File: "a.wasm", Name: "a", ApprovedBy: "x", ApprovedAt: at}
	tests := []struct {
		name string
		edit func(*Entry)
		want string
	}{
		{"upper-case sum", func(e *Entry) { e.SHA256 = strings.ToUpper(sumA) }, "sha256"},
		{"short sum", func(e *Entry) { e.SHA256 = sumA[:10] }, "sha256"},
		{"dir in file", func(e *Entry) { e.File = "sub/a.wasm" }, "without a directory"},
		{"dot-dot file", func(e *Entry) { e.File = ".." }, "not a file name"},
		{"no file", func(e *Entry) { e.File = "" }, "file: missing"},
		{"bad name", func(e *Entry) { e.Name = "a b" }, "name"},
		{"no by", func(e *Entry) { e.ApprovedBy = "" }, "approved_by"},
		{"no time", func(e *Entry) { e.ApprovedAt = time.Time{} }, "approved_at"},
		{"negative timeout", func(e *Entry) { e.Limits.Timeout = -time.Millisecond }, "timeout_ms"},
		{"huge memory", func(e *Entry) { e.Limits.Memory = 5000 << 20 }, "memory_mb"},
	}
	for _, tt := range tests {
		e := ok
		tt.edit(&e)
		var m Manifest
		err := m.Put(e)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Put error = %v, want one mentioning %q", tt.name, err, tt.want)
		}
		if m.Len() != 0 {
			t.Errorf("%s: the invalid entry was stored", tt.name)
		}
	}
	var m Manifest
	if err := m.Put(ok); err != nil {
		t.Errorf("valid entry refused: %v", err)
	}
}

func TestSum(t *testing.T) {
	// sha256("test"), computed independently.
	if got := Sum([]byte("test")); got != sumA {
		t.Errorf("Sum(test) = %s, want %s", got, sumA)
	}
	if !ValidSum(sumA) || ValidSum(strings.ToUpper(sumA)) || ValidSum(sumA[1:]) || ValidSum("") {
		t.Error("ValidSum accepts or refuses the wrong strings")
	}
	if Short(sumA) != "9f86d081884c" {
		t.Errorf("Short = %s", Short(sumA))
	}
}

func TestSkipTools(t *testing.T) {
	e := Entry{SkipTools: []string{"debug_.*", "tool_[0-9]+"}}
	for name, want := range map[string]bool{"debug_x": true, "tool_42": true, "tool_": false, "my_debug_x": false, "debug": false, "tool_1x": false} {
		if got := e.Skips(name); got != want {
			t.Errorf("Skips(%q) = %v", name, got)
		}
	}
	if err := ValidSkipPattern("a("); err == nil {
		t.Error("a( is a valid pattern")
	}
}
