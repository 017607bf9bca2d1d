package trace

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"
)

// plainEvent has Event's fields without its MarshalJSON: encoding/json's
// reflection-based output is the reference the hand-written encoder must
// match byte for byte.
type plainEvent Event

func reference(t *testing.T, ev Event) string {
	t.Helper()
	b, err := json.Marshal(plainEvent(ev))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEncoderMatchesEncodingJSON(t *testing.T) {
	ts := time.Date(2026, 11, 29, 10, 11, 12, 123456789, time.FixedZone("x", 3600))
	full := Event{Type: ToolCallEnd, SpanID: "a1", ParentID: "p", RunID: "r", Time: ts}
	// Give every field of the payload a value, through reflection so a
	// field added later is covered too.
	v := reflect.ValueOf(&full.Payload).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("s" + v.Type().Field(i).Name + " <&> \"q\" \\ \n\t\x01 é \u2028 \xff")
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Float64:
			f.SetFloat(1.5)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"a", "<b>"}))
		case reflect.Map:
			f.Set(reflect.ValueOf(map[string]string{"z": "1", "a": "2", "m&": "3"}))
		default:
			t.Fatalf("payload field %s has a kind the encoder test does not cover", v.Type().Field(i).Name)
		}
	}
	for _, ev := range []Event{full, {}, {Type: RunStart, Time: ts}} {
		got, _ := json.Marshal(ev)
		if want := reference(t, ev); string(got) != want {
			t.Errorf("encoder differs:\n got  %s\n want %s", got, want)
		}
	}
	for _, f := range []float64{0.5, 1e-7, 123456.789, 1e21, 2.5e-10, 1e20, -3.25, 0.000001} {
		ev := Event{Payload: Payload{DurationMS: f}}
		got, _ := json.Marshal(ev)
		if want := reference(t, ev); string(got) != want {
			t.Errorf("float %v: got %s want %s", f, got, want)
		}
	}
	nan, _ := json.Marshal(Event{Payload: Payload{DurationMS: math.NaN()}})
	if !json.Valid(nan) {
		t.Errorf("NaN made invalid JSON: %s", nan)
	}
}

func FuzzEncoder(f *testing.F) {
	f.Add("run_start", "plain", "{\"a\":1}", 1.25)
	f.Add("\x00\x1f<>&", "\xed\xa0\x80 \u2029", "", 1e-9)
	f.Fuzz(func(t *testing.T, typ, name, content string, d float64) {
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return
		}
		ev := Event{Type: Type(typ), SpanID: name, Payload: Payload{Name: name, Content: content, DurationMS: d, Names: []string{content}, Attrs: map[string]string{name: typ}}}
		got, _ := json.Marshal(ev)
		if want := reference(t, ev); string(got) != want {
			t.Fatalf("encoder differs:\n got  %s\n want %s", got, want)
		}
	})
}
