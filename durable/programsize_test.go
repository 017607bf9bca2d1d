package durable

import (
	"encoding/json"
	"testing"

	"github.com/autoagent-go/autoagent/codemode"
	"github.com/autoagent-go/autoagent/internal/loopwire"
	"github.com/autoagent-go/autoagent/tool"
)

// The size the workflow keeps of a program's input, one recorded call at
// a time, is the size of the input encoded whole, whatever the record
// holds (HTML characters, which encoding/json escapes; non-ASCII text;
// an error; a taint).
func TestProgramSizeIsTheEncodedSize(t *testing.T) {
	calls := []loopwire.RecordedCall{
		{Name: "get", Arguments: json.RawMessage(`{"q":"<a & b>"}`), Result: tool.Text("ünïcode ✓ <tag>")},
		{Name: "pay", Arguments: json.RawMessage(`{}`), Result: tool.Errorf("refused: %s", "\x00\"quoted\"")},
		{Name: "get", Arguments: json.RawMessage(`{"n":3}`), Result: tool.Text("plain"), Untrusted: true},
	}
	for _, tainted := range []bool{false, true} {
		var sizes programSize
		var record []loopwire.RecordedCall
		for i := 0; ; i++ {
			in := ProgramInput{Agent: "a/b", RunID: "run", Step: 2, CallID: "c1", Program: codemode.Program{Code: "call(\"<x>\")"}, Record: record, Tainted: tainted}
			got, err := sizes.of(in)
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			if got != len(data) {
				t.Errorf("tainted=%v, %d calls: size %d, encoded %d bytes", tainted, len(record), got, len(data))
			}
			if i == len(calls) {
				break
			}
			if err := sizes.add(calls[i]); err != nil {
				t.Fatal(err)
			}
			record = append(record, calls[i])
		}
	}
	var sizes programSize
	if _, err := sizes.of(ProgramInput{Record: calls[:1]}); err == nil {
		t.Error("a record of calls that were not sized: no error")
	}
}
