package synth

import (
	"encoding/json"
	"testing"
)

// The comparison itself is tested in internal/jsonvalue; this checks that
// synth's examples are judged by it.
func TestJSONEqual(t *testing.T) {
	if !JSONEqual(json.RawMessage(`{"n":1,"s":"x"}`), json.RawMessage(`{"s":"x","n":1.0}`)) {
		t.Error("the same object with its members reordered and 1 written as 1.0 is not equal")
	}
	if JSONEqual(json.RawMessage(`12345678901234567890`), json.RawMessage(`12345678901234567891`)) {
		t.Error("two integers that differ past float64's precision are equal")
	}
}
