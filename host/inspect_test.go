package host

import (
	"slices"
	"testing"

	"github.com/autoagent-go/autoagent/manifest"
)

func TestInspect(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	ins, err := h.Inspect(t.Context(), "fetch", wasmFile(t, "fetch.wasm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ins.ABI != ABIExtism || ins.SHA256 != manifest.Sum(wasmFile(t, "fetch.wasm")) ||
		!slices.Equal(ins.Needs, []string{"net"}) || !slices.Equal(ins.Description.Capabilities, []string{"net:example.com"}) ||
		len(ins.Description.Tools) != 1 || ins.Description.Tools[0].Name != "fetch" {
		t.Fatalf("inspection = %+v", ins)
	}
	// An import that is none of the host's own is an application's host
	// function: reviewed, listed and requested, though this host has none.
	ins, err = h.Inspect(t.Context(), "unknownimport", wasmFile(t, "unknownimport.wasm"), nil)
	if err != nil || !slices.Equal(ins.HostFunctions, []string{"env.system"}) {
		t.Fatalf("inspecting a module importing env.system: %+v, %v", ins, err)
	}
	if ins.Needs != nil {
		t.Errorf("needs %v", ins.Needs)
	}
}
