package main

import (
	"encoding/json"
	"testing"
)

// The warm-up's documents are what the engine reads: were one of them
// to stop decoding into its type, the warm-up would teach encoding/json
// nothing.
func TestWarmUpDocumentsDecode(t *testing.T) {
	var in callInput
	if err := json.Unmarshal([]byte(warmCall), &in); err != nil || in.Params.Name != "warm" {
		t.Fatalf("call input: %v %+v", err, in)
	}
	var p programInput
	if err := json.Unmarshal(in.Params.Arguments, &p); err != nil || p.Code != "return 1" || len(p.Tools) != 1 {
		t.Fatalf("program input: %v %+v", err, p)
	}
}
