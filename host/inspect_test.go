package host

import (
	"slices"
	"testing"
)

func TestInspect(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	ins, err := h.Inspect(t.Context(), "fetch", wasmFile(t, "fetch.wasm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ins.ABI != ABIExtism || ins.SHA256 != Hash(wasmFile(t, "fetch.wasm")) ||
		!slices.Equal(ins.Needs, []string{"net"}) || !slices.Equal(ins.Description.Capabilities, []string{"net:example.com"}) ||
		len(ins.Description.Tools) != 1 || ins.Description.Tools[0].Name != "fetch" {
		t.Fatalf("inspection = %+v", ins)
	}
	if _, err := h.Inspect(t.Context(), "unknownimport", wasmFile(t, "unknownimport.wasm"), nil); err == nil {
		t.Fatal("Inspect accepted a module importing env.system")
	}
}
