package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/tool"
)

func TestExposedName(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tc := range []struct{ prefix, name, want string }{
		{"", "get-sum", "get-sum"},
		{"gh_", "search", "gh_search"},
		{"", "files/read.v2", "files_read_v2"},
		{"fs.", "list dir", "fs_list_dir"},
		{"", "é", "_"},
		{"", "", "_"},
		{"", long, ""},
	} {
		got := exposedName(tc.prefix, tc.name)
		if tc.name == long {
			// the hash part is checked for shape, not value
			if len(got) != 64 || !strings.HasPrefix(got, strings.Repeat("x", 55)+"_") {
				t.Errorf("exposedName(%q) = %q, want 55 x, '_' and 8 hex digits", tc.name, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("exposedName(%q, %q) = %q, want %q", tc.prefix, tc.name, got, tc.want)
		}
	}
	if exposedName("", long) == exposedName("", long+"y") {
		t.Errorf("two long names that differ after the cut map to the same name")
	}
}

func FuzzExposedName(f *testing.F) {
	for _, s := range []string{"echo", "a.b/c", "", "ü", strings.Repeat("long-", 30)} {
		f.Add("p_", s)
	}
	f.Fuzz(func(t *testing.T, prefix, name string) {
		got := exposedName(prefix, name)
		if !tool.ValidName(got) {
			t.Fatalf("exposedName(%q, %q) = %q: not a valid tool name", prefix, name, got)
		}
		if tool.ValidName(prefix+name) && got != prefix+name {
			t.Fatalf("a valid name %q was changed to %q", prefix+name, got)
		}
	})
}

func FuzzObjectSchema(f *testing.F) {
	for _, s := range []string{``, `null`, `{}`, `{"type":"object"}`, `{"type":"string"}`, `[1]`, `{"properties":{"a":{}}}`, `{"type":["object","null"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		out, err := objectSchema(raw)
		if err != nil {
			return
		}
		var m map[string]any
		if json.Unmarshal(out, &m) != nil || m["type"] != "object" {
			t.Fatalf("objectSchema(%q) = %q: not an object schema", raw, out)
		}
	})
}
