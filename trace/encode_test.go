package trace

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
)

// The reference for the hand-written encoder is encoding/json's
// reflection-based output from the struct tags: these types have a
// family's fields without its MarshalJSON.
type (
	plainEvent     Event
	plainRun       Run
	plainModelCall ModelCall
	plainToolCall  ToolCall
	plainHook      Hook
	plainMemory    Memory
)

// families holds the zero value of every payload family.
var families = []Payload{Run{}, ModelCall{}, ToolCall{}, Guard{}, Hook{}, Memory{}, Sandbox{}, Synth{}}

// reference returns what encoding/json writes for p, with "attrs" nested
// as the format has it.
func reference(t *testing.T, p Payload) string {
	t.Helper()
	var v any
	switch p := p.(type) {
	case nil:
		return "{}"
	case Run:
		v = plainRun(p)
	case ModelCall:
		v = plainModelCall(p)
	case ToolCall:
		v = plainToolCall(p)
	case Hook:
		v = plainHook(p)
	case Memory:
		v = plainMemory(p)
	case Guard:
		type attrs struct {
			Stage string `json:"stage,omitempty"`
			Tool  string `json:"tool,omitempty"`
		}
		g := struct {
			plainGuard
			Attrs *attrs `json:"attrs,omitempty"`
		}{plainGuard: plainGuard(p)}
		if p.Stage != "" || p.Tool != "" {
			g.Attrs = &attrs{p.Stage, p.Tool}
		}
		v = g
	case Synth:
		s := struct {
			plainSynth
			Attrs struct {
				Language string `json:"language"`
				SHA256   string `json:"sha256,omitempty"`
			} `json:"attrs"`
		}{plainSynth: plainSynth(p)}
		s.Attrs.Language, s.Attrs.SHA256 = p.Language, p.SHA256
		v = s
	case Sandbox:
		type attrs struct {
			ABI        string   `json:"abi"`
			Denied     []string `json:"denied,omitempty"`
			Grants     []string `json:"grants"`
			GrantsUsed []string `json:"grants_used"`
			MemoryPeak int64    `json:"memory_peak"`
			Module     string   `json:"module"`
			Outcome    string   `json:"outcome"`
			Pooled     bool     `json:"pooled"`
			SHA256     string   `json:"sha256"`
		}
		orEmpty := func(l []string) []string {
			if l == nil {
				return []string{}
			}
			return l
		}
		v = struct {
			Name       string  `json:"name,omitempty"`
			CallID     string  `json:"call_id,omitempty"`
			Error      string  `json:"error,omitempty"`
			DurationMS float64 `json:"duration_ms,omitempty"`
			Attrs      attrs   `json:"attrs"`
		}{p.Name, p.CallID, p.Error, p.DurationMS, attrs{p.ABI, p.Denied, orEmpty(p.Grants), orEmpty(p.GrantsUsed), p.MemoryPeak, p.Module, p.Outcome, p.Pooled, p.SHA256}}
	case Fields:
		v = map[string]any(p)
	default:
		t.Fatalf("no reference for %T", p)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fill gives every field of the payload a value, through reflection so a
// field added later is covered too; strings hold s.
func fill(t *testing.T, p Payload, s string) Payload {
	t.Helper()
	v := reflect.New(reflect.TypeOf(p)).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(v.Type().Field(i).Name + s)
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Float64:
			f.SetFloat(1.5)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"a" + s, "<b>"}))
		default:
			t.Fatalf("%T.%s has a kind the encoder test does not cover", p, v.Type().Field(i).Name)
		}
	}
	return v.Interface().(Payload)
}

const awkward = " <&> \"q\" \\ \n\t\x01 é \u2028 \xff"

func TestEncoderMatchesEncodingJSON(t *testing.T) {
	ts := time.Date(2026, 11, 29, 10, 11, 12, 123456789, time.FixedZone("x", 3600))
	for _, zero := range families {
		for _, p := range []Payload{zero, fill(t, zero, awkward)} {
			got, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if want := reference(t, p); string(got) != want {
				t.Errorf("%T encoder differs:\n got  %s\n want %s", p, got, want)
			}
			ev := Event{Type: ToolCallEnd, SpanID: "a1" + awkward, ParentID: "p", RunID: "r", Time: ts, Payload: p}
			got, _ = json.Marshal(ev)
			if want, _ := json.Marshal(plainEvent(ev)); string(got) != string(want) {
				t.Errorf("event encoder differs:\n got  %s\n want %s", got, want)
			}
		}
	}
	fields := Fields{"z": "1" + awkward, "a": json.Number("2.50"), "m&": map[string]any{"n": []any{true, nil}}, "i": 7}
	if got, _ := json.Marshal(fields); string(got) != reference(t, fields) {
		t.Errorf("fields encoder differs:\n got  %s\n want %s", got, reference(t, fields))
	}
	for _, ev := range []Event{{}, {Type: RunStart, Time: ts}} {
		got, _ := json.Marshal(ev)
		want, _ := json.Marshal(plainEvent(ev))
		// encoding/json writes a nil interface as null; a trace line
		// always has a payload object.
		if string(got) != string(want[:len(want)-len(`null}`)])+`{}}` {
			t.Errorf("event without payload:\n got  %s\n want %s", got, want)
		}
	}
	for _, f := range []float64{0.5, 1e-7, 123456.789, 1e21, 2.5e-10, 1e20, -3.25, 0.000001} {
		p := ModelCall{DurationMS: f}
		got, _ := json.Marshal(p)
		if want := reference(t, p); string(got) != want {
			t.Errorf("float %v: got %s want %s", f, got, want)
		}
	}
	for _, p := range []Payload{ToolCall{DurationMS: math.NaN()}, Fields{"x": math.Inf(1)}} {
		if b, _ := json.Marshal(Event{Payload: p}); !json.Valid(b) {
			t.Errorf("NaN or infinity made invalid JSON: %s", b)
		}
	}
}

func FuzzEncoder(f *testing.F) {
	f.Add("run_start", "plain", "{\"a\":1}", 1.25)
	f.Add("\x00\x1f<>&", "\xed\xa0\x80 \u2029", "", 1e-9)
	f.Fuzz(func(t *testing.T, typ, name, content string, d float64) {
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return
		}
		for _, p := range []Payload{
			ToolCall{Name: name, Content: content, DurationMS: d},
			Guard{Name: name, Names: []string{content}, Stage: typ},
			Sandbox{Name: name, Grants: []string{content}, Module: typ, DurationMS: d},
			Synth{Name: name, Detail: content, Language: typ},
			Fields{name: typ, content: d},
		} {
			got, _ := json.Marshal(p)
			if want := reference(t, p); string(got) != want {
				t.Fatalf("%T encoder differs:\n got  %s\n want %s", p, got, want)
			}
		}
		ev := Event{Type: Type(typ), SpanID: name, Payload: ToolCall{Name: name}}
		got, _ := json.Marshal(ev)
		if want, _ := json.Marshal(plainEvent(ev)); string(got) != string(want) {
			t.Fatalf("event encoder differs:\n got  %s\n want %s", got, want)
		}
	})
}
