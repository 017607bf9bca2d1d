package manifest

import (
	"errors"
	"strings"
	"testing"
)

// entryDoc is a valid entry for sumA whose fields a test can override.
func entryDoc(extra string) string {
	return `{"file": "a.wasm", "name": "a", "grants": ["clock"], "approved_by": "x", "approved_at": "2026-01-01T00:00:00Z"` + extra + `}`
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name       string
		doc        string
		line, col  int    // 0: no position expected
		field      string // "" : no field expected
		reason     string
		versionErr bool
	}{
		{name: "empty", doc: "", reason: "empty"},
		{name: "spaces", doc: "  \n ", reason: "empty"},
		{name: "bom", doc: "\xef\xbb\xbf{}", line: 1, col: 1, reason: "byte-order mark"},
		{name: "bad utf8", doc: "{\"version\": 1, \"tools\": {}, \"x\": \"\xff\"}", line: 1, col: 35, reason: "UTF-8"},
		{name: "array", doc: "[]", line: 1, col: 1, reason: "top level must be a JSON object"},
		{name: "string", doc: `"hi"`, line: 1, col: 1, reason: "top level must be a JSON object"},
		{name: "truncated", doc: "{\"version\": 1,\n \"tools\": {", line: 2, col: 12, reason: "unexpected end of JSON input"},
		{name: "trailing comma", doc: "{\"version\": 1,\n  \"tools\": {},\n}", line: 3, col: 1, reason: "invalid character '}'"},
		{name: "trailing data", doc: "{\"version\": 1, \"tools\": {}}\n{}", line: 2, col: 1, reason: "invalid character '{' after top-level value"},
		{name: "missing version", doc: `{"tools": {}}`, reason: `missing "version"`},
		{name: "version 2", doc: "{\n\"version\": 2, \"tools\": {}, \"signatures\": []}", line: 2, col: 12, field: "version", reason: "unsupported version 2", versionErr: true},
		{name: "version object", doc: `{"version": {"major": 1}, "tools": {}}`, line: 1, col: 13, field: "version", reason: "want the number 1, found an object or array"},
		{name: "version string", doc: `{"version": "1", "tools": {}}`, line: 1, col: 13, field: "version", reason: `want the number 1, found "1"`},
		{name: "unknown top field", doc: "{\"version\": 1,\n \"tool\": {}}", line: 2, col: 2, field: "tool", reason: `unknown field "tool"`},
		{name: "duplicate hash", doc: "{\"version\": 1, \"tools\": {\n\"" + sumA + "\": " + entryDoc("") + ",\n\"" + sumA + "\": " + entryDoc("") + "}}",
			line: 3, col: 1, field: `tools["` + sumA + `"]`, reason: "duplicate key"},
		{name: "duplicate through an escape", doc: `{"version": 1, "tools": {}, "tool\u0073": {}}`, line: 1, col: 29, field: "tools", reason: `duplicate key "tools"`},
		{name: "duplicate field", doc: `{"version": 1, "version": 1, "tools": {}}`, line: 1, col: 16, field: "version", reason: "duplicate key"},
		{name: "bad hash key", doc: `{"version": 1, "tools": {"abc": ` + entryDoc("") + `}}`, line: 1, col: 26, field: `tools["abc"]`, reason: "64 lower-case hex"},
		{name: "unknown entry field", doc: "{\"version\": 1, \"tools\": {\"" + sumA + "\": " + entryDoc(",\n \"grant\": []") + "}}",
			line: 2, col: 2, field: `tools["` + sumA + `"].grant`, reason: `unknown field "grant"`},
		{name: "unknown limit", doc: `{"version": 1, "tools": {"` + sumA + `": ` + entryDoc(`, "limits": {"cpu": 1}`) + `}}`,
			field: `tools["` + sumA + `"].limits.cpu`, reason: `unknown field "cpu"`},
		{name: "bad grant", doc: "{\"version\": 1, \"tools\": {\"" + sumA + "\": {\"file\": \"a.wasm\", \"name\": \"a\",\n \"grants\": [\"clock\", \"net:a.*.com\"], \"approved_by\": \"x\", \"approved_at\": \"2026-01-01T00:00:00Z\"}}}",
			line: 2, col: 22, field: `tools["` + sumA + `"].grants[1]`, reason: `invalid grant "net:a.*.com": net: a wildcard`},
		{name: "relative fs grant", doc: `{"version": 1, "tools": {"` + sumA + `": {"file": "a.wasm", "name": "a", "grants": ["fs.read:data"], "approved_by": "x", "approved_at": "2026-01-01T00:00:00Z"}}}`,
			field: `tools["` + sumA + `"].grants[0]`, reason: "must be absolute"},
		{name: "grant not string", doc: `{"version": 1, "tools": {"` + sumA + `": {"file": "a.wasm", "name": "a", "grants": [1], "approved_by": "x", "approved_at": "2026-01-01T00:00:00Z"}}}`,
			field: `tools["` + sumA + `"].grants[0]`, line: 1, col: 137, reason: "want a string, found JSON number"},
		{name: "memory string", doc: `{"version": 1, "tools": {"` + sumA + `": ` + entryDoc(`, "limits": {"memory_mb": "64"}`) + `}}`,
			field: `tools["` + sumA + `"].limits.memory_mb`, reason: "want a number, found JSON string"},
		{name: "negative memory", doc: `{"version": 1, "tools": {"` + sumA + `": ` + entryDoc(`, "limits": {"memory_mb": -1}`) + `}}`,
			field: `tools["` + sumA + `"].limits`, reason: "memory_mb -1"},
		{name: "memory twice", doc: `{"version": 1, "tools": {"` + sumA + `": ` + entryDoc(`, "limits": {"memory_mb": 1, "memory_bytes": 65536}`) + `}}`,
			field: `tools["` + sumA + `"].limits`, reason: "set one of them"},
		{name: "negative stack", doc: `{"version": 1, "tools": {"` + sumA + `": ` + entryDoc(`, "limits": {"stack_bytes": -1}`) + `}}`,
			field: `tools["` + sumA + `"].limits`, reason: "stack limit -1 (stack_bytes) out of range"},
		{name: "unknown limit", doc: `{"version": 1, "tools": {"` + sumA + `": ` + entryDoc(`, "limits": {"stack_mb": 1}`) + `}}`,
			field: `tools["` + sumA + `"].limits.stack_mb`, reason: "unknown field"},
		{name: "missing file", doc: `{"version": 1, "tools": {"` + sumA + `": {"name": "a", "approved_by": "x", "approved_at": "2026-01-01T00:00:00Z"}}}`,
			field: `tools["` + sumA + `"].file`, reason: "missing"},
		{name: "missing approved_by", doc: `{"version": 1, "tools": {"` + sumA + `": {"file": "a.wasm", "name": "a", "approved_at": "2026-01-01T00:00:00Z"}}}`,
			field: `tools["` + sumA + `"].approved_by`, reason: "missing"},
		{name: "bad time", doc: `{"version": 1, "tools": {"` + sumA + `": {"file": "a.wasm", "name": "a", "approved_by": "x", "approved_at": "yesterday"}}}`,
			field: `tools["` + sumA + `"].approved_at`, reason: "RFC 3339"},
		{name: "bad sidecar sum", doc: `{"version": 1, "tools": {"` + sumA + `": ` + entryDoc(`, "sidecar_sha256": "abc"`) + `}}`,
			field: `tools["` + sumA + `"]`, reason: "sidecar_sha256"},
		{name: "tools not object", doc: `{"version": 1, "tools": []}`, line: 1, col: 25, field: "tools", reason: "want an object, found JSON array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.doc))
			if err == nil {
				t.Fatalf("Parse succeeded with %d entries", m.Len())
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if got := errors.Is(err, ErrUnsupportedVersion); got != tt.versionErr {
				t.Errorf("errors.Is(err, ErrUnsupportedVersion) = %v", got)
			}
			if got := errors.Is(err, ErrCorrupt); got == tt.versionErr {
				t.Errorf("errors.Is(err, ErrCorrupt) = %v", got)
			}
			if !strings.Contains(pe.Err.Error(), tt.reason) {
				t.Errorf("reason = %q, want it to contain %q", pe.Err, tt.reason)
			}
			if tt.line != 0 && (pe.Line != tt.line || pe.Column != tt.col) {
				t.Errorf("position = %d:%d, want %d:%d (%v)", pe.Line, pe.Column, tt.line, tt.col, err)
			}
			if tt.field != "" && pe.Field != tt.field {
				t.Errorf("field = %q, want %q", pe.Field, tt.field)
			}
		})
	}
}

func TestParseErrorNamesTheFile(t *testing.T) {
	_, err := parse("plugins/manifest.json", []byte("{\n  \"version\": 1,\n  \"tools\": {,}\n}"))
	want := "manifest: plugins/manifest.json:3:13: invalid character ',' looking for beginning of object key string (the file was left unchanged: fix it or restore it from version control)"
	if err == nil || err.Error() != want {
		t.Errorf("error =\n%v\nwant\n%s", err, want)
	}
}

func TestParseGrantErrorUnwraps(t *testing.T) {
	doc := `{"version": 1, "tools": {"` + sumA + `": {"file": "a.wasm", "name": "a", "grants": ["env:1X"], "approved_by": "x", "approved_at": "2026-01-01T00:00:00Z"}}}`
	_, err := Parse([]byte(doc))
	var ge *GrantError
	if !errors.As(err, &ge) || ge.Grant != "env:1X" {
		t.Errorf("error %v does not unwrap to the *GrantError for env:1X", err)
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		n    int
	}{
		{"no tools key", `{"version": 1}`, 0},
		{"empty tools", `{"version": 1, "tools": {}}`, 0},
		{"no grants, no limits, offset time", `{"version": 1, "tools": {"` + sumA + `": {"file": "a.wasm", "name": "a", "approved_by": "x", "approved_at": "2026-01-01T02:00:00+02:00"}}}`, 1},
		{"crlf", "{\r\n\"version\": 1,\r\n\"tools\": {}\r\n}\r\n", 0},
	}
	for _, tt := range tests {
		m, err := Parse([]byte(tt.doc))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if m.Len() != tt.n {
			t.Errorf("%s: %d entries, want %d", tt.name, m.Len(), tt.n)
		}
	}
	m, _ := Parse([]byte(tests[2].doc))
	if e, _ := m.Lookup(sumA); e.ApprovedAt.Location().String() != "UTC" || e.ApprovedAt.Hour() != 0 {
		t.Errorf("approved_at not normalised to UTC: %v", e.ApprovedAt)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"version": 1, "tools": {}}`))
	f.Add([]byte(`{"version": 1, "tools": {"` + sumA + `": ` + entryDoc(`, "limits": {"memory_mb": 64, "timeout_ms": 5000}, "note": "n"`) + `}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupportedVersion) {
				t.Fatalf("error %v matches neither ErrCorrupt nor ErrUnsupportedVersion", err)
			}
			if pe.Offset < 0 || pe.Offset > int64(len(data)) || pe.Line < 0 || (pe.Line == 0) != (pe.Column == 0) {
				t.Fatalf("bad position %d (%d:%d) for %d bytes", pe.Offset, pe.Line, pe.Column, len(data))
			}
			return
		}
		// What parses must write back to a file that parses to the same
		// approvals, and writing is then stable.
		out, err := m.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON of a parsed manifest: %v", err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of\n%s\nfailed: %v", out, err)
		}
		if back.Len() != m.Len() {
			t.Fatalf("re-parse has %d entries, want %d", back.Len(), m.Len())
		}
		for _, e := range m.Entries() {
			b, ok := back.Lookup(e.SHA256)
			if !ok || b.File != e.File || b.Name != e.Name || len(b.Grants) != len(e.Grants) || !b.ApprovedAt.Equal(e.ApprovedAt) || b.Limits != e.Limits || b.Note != e.Note {
				t.Fatalf("entry %s changed in the round trip: %+v != %+v", e.SHA256, b, e)
			}
		}
		again, _ := back.MarshalJSON()
		if string(again) != string(out) {
			t.Fatalf("marshal not stable:\n%s\n!=\n%s", again, out)
		}
	})
}
