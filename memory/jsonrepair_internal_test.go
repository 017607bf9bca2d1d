package memory

import (
	"encoding/json"
	"testing"
)

func TestRepairTruncatedJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"cut after a complete operation", `{"operations":[{"op":"add","fact":"a"},`, `{"operations":[{"op":"add","fact":"a"}]}`, true},
		{"cut inside a string drops the partial operation", `{"operations":[{"op":"add","fact":"a"},{"op":"add","fact":"b is unfin`, `{"operations":[{"op":"add","fact":"a"}]}`, true},
		{"cut before the closing brace keeps the operation", `{"operations":[{"op":"add","fact":"a"}`, `{"operations":[{"op":"add","fact":"a"}]}`, true},
		{"cut after a key", `{"operations":[{"op":"add","fact":"a"},{"op":`, `{"operations":[{"op":"add","fact":"a"}]}`, true},
		{"escaped quote inside a string", `{"operations":[{"op":"add","fact":"say \"hi\""},{"op":"add","fact":"x\"`, `{"operations":[{"op":"add","fact":"say \"hi\""}]}`, true},
		{"complete but invalid JSON is not repaired", `{"operations":[1,]}`, "", false},
		{"mismatched closer", `{"operations":[}`, "", false},
		{"nothing complete", `{"operations":[{"op":"ad`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := repairTruncatedJSON(tt.in)
			if ok != tt.ok || got != tt.want {
				t.Errorf("repair(%s) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestParseOperations(t *testing.T) {
	ops, err := parseOperations("Here you go:\n```json\n{\"operations\":[{\"op\":\"ADD\",\"fact\":\"x\"},{\"op\":\"update\",\"id\":\"7\",\"fact\":\"y\"},{\"op\":\"delete\",\"id\":true},{\"op\":\"delete\",\"id\":1.5},\"junk\"]}\n```")
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 2 || ops[0].Op != "add" || ops[1].ID != 7 {
		t.Errorf("ops = %+v; want add, then update of 7 (boolean and fractional ids dropped)", ops)
	}
	if _, err := parseOperations(`{"operations": null}`); err == nil {
		t.Error("null operations accepted")
	}
}

func FuzzRepairTruncatedJSON(f *testing.F) {
	for _, s := range []string{`{"operations":[{"op":"add","fact":"a"},{"op":"add","fact":"b`, `{"a":[1,2`, `[[[`, `{"x":"\\`, `}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fixed, ok := repairTruncatedJSON(s)
		if ok && !json.Valid([]byte(fixed)) {
			t.Fatalf("repair(%q) = %q, which is not valid JSON", s, fixed)
		}
		_, _ = parseOperations(s) // must never panic
	})
}

func FuzzDecodeStore(f *testing.F) {
	f.Add([]byte(`{"version":1,"next_id":2,"facts":[{"id":1,"fact":"a","source":"user"}]}`))
	f.Add([]byte(`{"facts":[{"id":-1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeStore(data)
		if err != nil {
			return
		}
		seen := map[int64]bool{}
		for i, r := range st.Facts {
			if r.ID <= 0 || seen[r.ID] || r.ID >= st.NextID || (i > 0 && st.Facts[i-1].ID >= r.ID) || !r.Source.Valid() {
				t.Fatalf("decodeStore accepted an inconsistent state: %+v", st)
			}
			seen[r.ID] = true
		}
	})
}
