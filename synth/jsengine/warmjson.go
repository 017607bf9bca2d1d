package main

import "encoding/json"

// The host snapshots the engine after its initialisation and starts
// every call's instance from it, so each call is its instance's first:
// what encoding/json learns of a type at its first use it would learn in
// every call. The engine teaches it its own call, program and result
// types here, at initialisation, with no caller's data.
func init() {
	var in callInput
	_ = json.Unmarshal([]byte(warmCall), &in)
	var p programInput
	_ = json.Unmarshal(in.Params.Arguments, &p)
	_, _ = json.Marshal(programOutput{Result: json.RawMessage(`{"a":"\u00e9"}`), Console: "warm"})
	var s string
	_ = json.Unmarshal([]byte(`"w\u00e9"`), &s)
}

// warmCall is the program call the warm-up decodes.
const warmCall = `{"params":{"name":"warm","arguments":{"code":"return 1","language":"javascript","tools":["warm"]}}}`
