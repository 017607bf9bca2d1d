package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite testdata/format2.jsonl from testdata/format1.jsonl")

// allTypes returns every type of this package (read from its source, so
// a type added later is covered), a synth stage, and a type of no family.
func allTypes(t *testing.T) []Type {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "event.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []Type
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Type" {
				continue
			}
			lit := v.Values[0].(*ast.BasicLit)
			types = append(types, Type(strings.Trim(lit.Value, `"`)))
		}
	}
	if len(types) < 30 {
		t.Fatalf("found %d types in event.go", len(types))
	}
	return append(types, "synth_write", "synth_some_later_stage", "an_embedders_own")
}

// familyOf is the payload an event of type typ decodes to.
func familyOf(t *testing.T, typ Type) Payload {
	t.Helper()
	p, err := decodePayload(typ, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if p == nil {
		return Fields{}
	}
	return p
}

// Every type of this package has a family; synth stages are Synth, and a
// type of no family keeps its fields.
func TestEveryTypeHasAFamily(t *testing.T) {
	for _, typ := range allTypes(t) {
		p := familyOf(t, typ)
		_, generic := p.(Fields)
		if want := typ == "an_embedders_own"; generic != want {
			t.Errorf("%s decodes as %T", typ, p)
		}
		if _, synth := p.(Synth); synth != strings.HasPrefix(string(typ), "synth_") {
			t.Errorf("%s decodes as %T", typ, p)
		}
	}
}

// Every event type, each field of its family set, comes back from its
// JSON line as it went in, through a Tracer and a JSONL file.
func TestRoundTripEveryType(t *testing.T) {
	at := time.Date(2026, 12, 5, 9, 30, 0, 123456000, time.UTC)
	for _, typ := range allTypes(t) {
		var p Payload
		switch zero := familyOf(t, typ).(type) {
		case Fields:
			p = Fields{"name": "x <&> é", "count": json.Number("3"), "ratio": json.Number("0.25"), "ok": true, "none": nil,
				"attrs": map[string]any{"k": "v", "list": []any{json.Number("1"), "two"}}}
		default:
			p = fill(t, zero, ` <&> "q" \ é`)
		}
		var file bytes.Buffer
		var seen Event
		tr := NewWithOptions(Options{Sinks: []Sink{JSONL(&file), SinkFunc(func(ev Event) { seen = ev })}, Clock: func() time.Time { return at }})
		tr.Emit(Event{Type: typ, ParentID: "p1", RunID: "r1", Payload: p})
		var back Event
		if err := json.Unmarshal(file.Bytes(), &back); err != nil {
			t.Fatalf("%s: %v\n%s", typ, err, file.Bytes())
		}
		if diff := cmp.Diff(seen, back); diff != "" {
			t.Errorf("%s: the event read back differs (-emitted +read):\n%s", typ, diff)
		}
		if diff := cmp.Diff(p, back.Payload); diff != "" {
			t.Errorf("%s: the payload read back differs (-emitted +read):\n%s", typ, diff)
		}
	}
	// No payload: {} on the line; a family's zero value, or nil, read back.
	for _, typ := range []Type{RunEnd, "an_embedders_own"} {
		b, _ := json.Marshal(Event{Type: typ})
		var back Event
		if err := json.Unmarshal(b, &back); err != nil || !strings.Contains(string(b), `"payload":{}`) {
			t.Fatalf("%s: %s, %v", typ, b, err)
		}
		if want := familyOf(t, typ); !reflect.DeepEqual(back.Payload, want) {
			t.Errorf("%s without payload read back as %#v", typ, back.Payload)
		}
	}
}

// readLines returns the lines of a testdata file.
func readLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// testdata/format1.jsonl holds an event of every type as the first format
// wrote it (one 41-field payload struct; written at 42477ed). Read and
// written again, every line is the same bytes but sandbox_call's (whose
// numbers, booleans and lists are no longer strings) and an embedder's
// own event's (its keys now sorted, none lost). Types added since (the
// response cache's) are appended as written today. testdata/format2.jsonl is
// what is written (-update rewrites it).
func TestReadsFormat1(t *testing.T) {
	old := readLines(t, "format1.jsonl")
	var out bytes.Buffer
	types := map[Type]bool{}
	for i, line := range old {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		types[ev.Type] = true
		again, _ := json.Marshal(ev)
		out.Write(append(again, '\n'))
		switch ev.Payload.(type) {
		case Sandbox:
		case Fields:
			var a, b map[string]any
			json.Unmarshal([]byte(line), &a)
			json.Unmarshal(again, &b)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("line %d lost data:\n old %s\n new %s", i+1, line, again)
			}
		default:
			if string(again) != line {
				t.Errorf("line %d changed:\n old %s\n new %s", i+1, line, again)
			}
		}
	}
	for _, typ := range allTypes(t) {
		if !types[typ] && typ != "synth_some_later_stage" && typ != "an_embedders_own" {
			t.Errorf("format1.jsonl has no %s event", typ)
		}
	}
	golden := filepath.Join("testdata", "format2.jsonl")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("format 2 differs from %s (-want +got; -update rewrites it):\n%s", golden, diff)
	}
	// Both formats summarise alike.
	s1, _ := Summarize(strings.NewReader(strings.Join(old, "\n")))
	s2, _ := Summarize(bytes.NewReader(want))
	if diff := cmp.Diff(s1, s2, cmpopts.IgnoreUnexported(RunStats{})); diff != "" || s1.BadLineCount != 0 {
		t.Errorf("the formats summarise differently (-format 1 +format 2):\n%s", diff)
	}
}

// A sandbox_call line of the first format, every attribute a string,
// reads as the typed payload a line of format 2 holds.
func TestSandboxCallBothFormats(t *testing.T) {
	want := Sandbox{
		Name: "fetch", CallID: "c16", Error: "refused", DurationMS: 1.5,
		Module: "fetch", SHA256: "ab12", ABI: "extism", Outcome: "denied",
		Grants: []string{"net:api.example.com", "clock"}, GrantsUsed: []string{"net:api.example.com"},
		Denied:     []string{"net: evil.example is not granted", "env: HOME is not granted"},
		MemoryPeak: 2097152, Pooled: true,
	}
	format1 := `{"type":"sandbox_call","span_id":"s","ts":"2026-12-05T09:00:00Z","payload":{"name":"fetch","call_id":"c16","error":"refused","duration_ms":1.5,"attrs":{"abi":"extism","denied":"net: evil.example is not granted; env: HOME is not granted","grants":"net:api.example.com clock","grants_used":"net:api.example.com","memory_peak":"2097152","module":"fetch","outcome":"denied","pooled":"true","sha256":"ab12"}}}`
	format2 := `{"type":"sandbox_call","span_id":"s","ts":"2026-12-05T09:00:00Z","payload":{"name":"fetch","call_id":"c16","error":"refused","duration_ms":1.5,"attrs":{"abi":"extism","denied":["net: evil.example is not granted","env: HOME is not granted"],"grants":["net:api.example.com","clock"],"grants_used":["net:api.example.com"],"memory_peak":2097152,"module":"fetch","outcome":"denied","pooled":true,"sha256":"ab12"}}}`
	for _, line := range []string{format1, format2} {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, ev.Payload); diff != "" {
			t.Errorf("payload (-want +got):\n%s", diff)
		}
		if again, _ := json.Marshal(ev); string(again) != format2 {
			t.Errorf("written again:\n got  %s\n want %s", again, format2)
		}
	}
	empty := `{"type":"sandbox_call","span_id":"s","ts":"2026-12-05T09:00:00Z","payload":{"attrs":{"grants":"","grants_used":"","memory_peak":"0","pooled":"false"}}}`
	var ev Event
	if err := json.Unmarshal([]byte(empty), &ev); err != nil || !reflect.DeepEqual(ev.Payload, Sandbox{}) {
		t.Errorf("empty first-format attributes: %#v, %v", ev.Payload, err)
	}
	for _, bad := range []string{`"memory_peak":"lots"`, `"pooled":"maybe"`, `"grants":7`, `"memory_peak":true`} {
		line := `{"type":"sandbox_call","span_id":"s","payload":{"attrs":{` + bad + `}}}`
		if err := json.Unmarshal([]byte(line), &ev); err == nil {
			t.Errorf("%s accepted: %#v", bad, ev.Payload)
		}
	}
}

// A value of the wrong JSON type in a family's field makes the line
// invalid (the summary counts it in BadLines), as in the first format.
func TestDecodeRefusesWrongTypes(t *testing.T) {
	for _, line := range []string{
		`{"type":"run_end","span_id":"s","payload":{"steps":"two"}}`,
		`{"type":"guardrail","span_id":"s","payload":{"attrs":{"stage":1}}}`,
		`{"type":"synth_build","span_id":"s","payload":{"attrs":[]}}`,
		`{"type":"mine","span_id":"s","payload":[1,2]}`,
		`{"type":"tool_call_end","span_id":"s","payload":"x"}`,
	} {
		var ev Event
		if err := json.Unmarshal([]byte(line), &ev); err == nil {
			t.Errorf("%s read as %#v", line, ev)
		}
	}
}

// generic reads s into v with numbers as json.Number.
func generic(s string, v any) error {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	return dec.Decode(v)
}

// FuzzDecode: whatever a line holds, reading it never panics, and a line
// read once is written in a form that reads back to the same line; an
// event of a type of no family keeps every field.
func FuzzDecode(f *testing.F) {
	b, err := os.ReadFile(filepath.Join("testdata", "format1.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f.Add(sc.Text())
	}
	f.Add(`{"type":"x","payload":{"a":1e400,"b":-0.0,"c":"\ud800","d":{"e":[null,{}]}}}`)
	f.Add(`{"type":"sandbox_call","payload":{"attrs":{"grants":[],"denied":"","memory_peak":-1}}}`)
	f.Add(`{"type":"run_end","payload":null,"ts":"0000-01-01T00:00:00+23:59"}`)
	f.Fuzz(func(t *testing.T, line string) {
		var ev Event
		if json.Unmarshal([]byte(line), &ev) != nil {
			return
		}
		first, err := json.Marshal(ev)
		if err != nil || !json.Valid(first) {
			t.Fatalf("%q read, then written as invalid JSON %q (%v)", line, first, err)
		}
		var back Event
		if err := json.Unmarshal(first, &back); err != nil {
			t.Fatalf("%q written as %q, which does not read: %v", line, first, err)
		}
		if again, _ := json.Marshal(back); string(again) != string(first) {
			t.Fatalf("not stable:\n in     %q\n first  %q\n second %q", line, first, again)
		}
		if _, fields := ev.Payload.(Fields); fields || ev.Payload == nil {
			var in, out struct{ Payload any }
			if generic(line, &in) != nil || generic(string(first), &out) != nil {
				t.Fatal("the line does not read as generic JSON")
			}
			if in.Payload == nil {
				in.Payload = map[string]any{}
			}
			if !reflect.DeepEqual(in.Payload, out.Payload) {
				t.Fatalf("fields lost:\n in  %q\n out %q", line, first)
			}
		}
	})
}
