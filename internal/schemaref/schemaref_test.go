package schemaref

import (
	"encoding/json"
	"testing"
)

func TestResolve(t *testing.T) {
	var root map[string]any
	if err := json.Unmarshal([]byte(`{"$defs":{"P":{"type":"object"},"a/b":{"const":1},"t~x":{"const":2}},"items":[{"type":"string"}]}`), &root); err != nil {
		t.Fatal(err)
	}
	if Resolve(root, "#")["$defs"] == nil {
		t.Error("# is not the root")
	}
	if Resolve(root, "#/$defs/P")["type"] != "object" {
		t.Error("#/$defs/P")
	}
	if Resolve(root, "#/$defs/a~1b")["const"] != float64(1) || Resolve(root, "#/$defs/t~0x")["const"] != float64(2) {
		t.Error("escaped tokens")
	}
	for _, ref := range []string{"#/$defs/missing", "#/$defs/P/type", "#/items/0", "other.json#/x", "#nothing"} {
		if got := Resolve(root, ref); got != nil {
			t.Errorf("%s resolved to %v", ref, got)
		}
	}
}
