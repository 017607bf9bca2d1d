package manifest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestSourceRoundTripAndOldManifests(t *testing.T) {
	sum := strings.Repeat("a", 64)
	old := `{"version": 1, "tools": {"` + sum + `": {"file": "echo.wasm", "name": "echo", "grants": [],
  "approved_by": "alice", "approved_at": "2026-11-29T10:00:00Z"}}}`
	m, err := parse("old.json", []byte(old))
	if err != nil {
		t.Fatalf("a manifest without sources: %v", err)
	}
	e, _ := m.Lookup(sum)
	if !e.Source.IsZero() {
		t.Fatalf("source %+v from a manifest without one", e.Source)
	}
	out, _ := m.MarshalJSON()
	if strings.Contains(string(out), "source") {
		t.Fatalf("an entry without a source writes one:\n%s", out)
	}
	e.Source = Source{Reference: "r.example.com/tools/echo:1", Digest: "sha256:" + strings.Repeat("b", 64), Signer: "alice (key sha256:cc)"}
	if err := m.Put(e); err != nil {
		t.Fatal(err)
	}
	out, _ = m.MarshalJSON()
	again, err := parse("new.json", out)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := again.Lookup(sum); got.Source != e.Source {
		t.Fatalf("round trip: %+v, want %+v", got.Source, e.Source)
	}
	for _, bad := range []Source{
		{Reference: "r/x:1", Digest: "sha256:short"},
		{Reference: "", Digest: "sha256:" + strings.Repeat("b", 64)},
		{Reference: "r/x:1\n", Digest: "sha256:" + strings.Repeat("b", 64)},
		{Reference: "r/x:1", Digest: "sha256:" + strings.Repeat("b", 64), Signer: "a\x1bb"},
	} {
		e.Source = bad
		if err := m.Put(e); err == nil {
			t.Errorf("source %+v accepted", bad)
		}
	}
	bogus := strings.Replace(string(out), `"signer"`, `"signed"`, 1)
	if _, err := parse("bogus.json", []byte(bogus)); err == nil || !strings.Contains(err.Error(), "unknown field") {
		t.Fatalf("an unknown source field: %v", err)
	}
}

func TestRecordPull(t *testing.T) {
	dir := t.TempDir()
	s := &Store{Path: filepath.Join(dir, "manifest.json"), Now: func() time.Time { return time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC) }}
	src := Source{Reference: "r.example.com/tools/echo:1", Digest: "sha256:" + strings.Repeat("b", 64)}
	if err := s.RecordPull(context.Background(), Pull{SHA256: strings.Repeat("a", 64), File: "echo.wasm", Name: "echo", Source: src, Unsigned: true, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	var got []AuditEntry
	for r, err := range ReadLog(s.LogPath()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	if len(got) != 1 || got[0].Action != ActionPull || !got[0].Unsigned || got[0].Reference != src.Reference || got[0].By != "bob" {
		t.Fatalf("log: %+v", got)
	}
	if _, err := os.Stat(s.Path); !os.IsNotExist(err) {
		t.Fatal("recording a pull wrote the manifest")
	}
	if err := s.RecordPull(context.Background(), Pull{Source: src}); err == nil {
		t.Fatal("a pull without By recorded")
	}
}
