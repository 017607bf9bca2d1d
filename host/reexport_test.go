package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mustRunWASI checks that a WASI module still loads and runs in h: the
// host's WASI module serves.
func mustRunWASI(t *testing.T, h *Host) {
	t.Helper()
	l := load(t, h, "wasicmd.wasm", Module{})
	res := call(t, l, "readfile", `{"path":"/nowhere"}`)
	if !res.IsError || !strings.Contains(res.Text(), "open /nowhere") {
		t.Fatalf("a WASI module no longer runs: %+v", res)
	}
}

// TestReexportedImportsRefused: a module that hands the host one of its
// imports as its own function (an export the host calls, its start
// function) is refused at load, before anything of it runs, and the
// host's WASI module serves other modules after it (issue 38: exporting
// WASI's proc_exit as call closed WASI for the whole process, and the
// next load panicked).
func TestReexportedImportsRefused(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	cases := []struct{ file, imp, exposed string }{
		{"reexportexit.wasm", "wasi_snapshot_preview1.proc_exit", `the export "call"`},
		{"reexportdescribe.wasm", "wasi_snapshot_preview1.proc_exit", `the export "describe"`},
		{"reexportstart.wasm", "wasi_snapshot_preview1.proc_exit", `the export "_start"`},
		{"reexportkernel.wasm", "extism:host/env.reset", `the export "call"`},
		{"startimport.wasm", "extism:host/env.reset", "its start function"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			name := strings.TrimSuffix(c.file, ".wasm")
			for _, inspect := range []bool{false, true} {
				var err error
				if inspect {
					_, err = h.Inspect(context.Background(), name, wasmFile(t, c.file), nil)
				} else {
					var l *Loaded
					l, err = h.Load(context.Background(), Module{Name: name, Bytes: wasmFile(t, c.file), Sidecar: sidecarOf(c.file)})
					if err == nil {
						_ = l.Close(context.Background())
					}
				}
				var ie *ImportError
				if !errors.As(err, &ie) || ie.Import != c.imp || ie.Exposed != c.exposed || ie.Module != name {
					t.Fatalf("inspect %v: error %#v, want an *ImportError for %s exposed as %s", inspect, err, c.imp, c.exposed)
				}
				if want := "a module may not export a function it imports"; !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			mustRunWASI(t, h)
			mustEcho(t, h)
		})
	}
}

// TestReexportedImportsRefusedCompiled: the check on the compiled module
// refuses what the check before the rewrite would (a module prepared
// earlier and read back from the cache of prepared modules skips the
// latter).
func TestReexportedImportsRefusedCompiled(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	for _, c := range []struct{ file, exposed string }{
		{"reexportexit.wasm", `the export "call"`},
		{"startimport.wasm", "its start function"},
	} {
		b := wasmFile(t, c.file)
		if _, err := h.prepare(b, h.rewriteOptions(h.limits.Tables), false); err == nil {
			t.Fatalf("%s: prepare accepted it", c.file)
		}
		h.opts.defect = defectReexport
		prepared, err := h.prepare(b, h.rewriteOptions(h.limits.Tables), false)
		h.opts.defect = ""
		if err != nil {
			t.Fatal(err)
		}
		mod, err := h.compileCached(context.Background(), h.gen, prepared)
		if err != nil {
			t.Fatal(err)
		}
		err = checkCompiledReexports("m", mod)
		_ = mod.Close(context.Background())
		var ie *ImportError
		if !errors.As(err, &ie) || ie.Exposed != c.exposed {
			t.Errorf("%s: checkCompiledReexports = %v, want the import exposed as %s", c.file, err, c.exposed)
		}
	}
}

// TestWASIKeepsItsHostModule: behind the load-time refusal, the host
// never calls a function a module imports as if it were the module's own,
// so a guest that handed the host its proc_exit import fails its own call
// without closing WASI for the process. The refusal is switched off here
// to reach that defence.
func TestWASIKeepsItsHostModule(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{defect: defectReexport})
	l := load(t, h, "reexportexit.wasm", Module{})
	res := call(t, l, "reexportexit", `{}`)
	if !res.IsError || !strings.Contains(res.Text(), `tool crashed: the module exports the host function wasi_snapshot_preview1.proc_exit as its own, which the host does not call`) {
		t.Errorf("the re-exported proc_exit: %+v", res)
	}
	if (*h.gen.hostMods.wasi.Load()).IsClosed() {
		t.Error("the WASI host module was closed")
	}
	_, err := h.Load(context.Background(), Module{Name: "reexportdescribe", Bytes: wasmFile(t, "reexportdescribe.wasm")})
	if err == nil || !strings.Contains(err.Error(), "describe failed: tool crashed: the module exports the host function wasi_snapshot_preview1.proc_exit as its own") {
		t.Errorf("describe as proc_exit: %v", err)
	}
	cmd := load(t, h, "reexportstart.wasm", Module{})
	if res := call(t, cmd, "reexportstart", `{}`); !res.IsError || !strings.Contains(res.Text(), "the module exports the host function wasi_snapshot_preview1.proc_exit") {
		t.Errorf("_start as proc_exit: %+v", res)
	}
	mustRunWASI(t, h)
}

// TestWASIMadeAgainWhenClosed: should the WASI host module be closed
// anyway, the import check does not depend on it (it dereferenced the
// runtime's missing module and panicked) and the next instance makes it
// again, so one guest cannot take WASI from every module of the process.
func TestWASIMadeAgainWhenClosed(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	if err := (*h.gen.hostMods.wasi.Load()).Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mustRunWASI(t, h)
	if (*h.gen.hostMods.wasi.Load()).IsClosed() {
		t.Error("the WASI host module is still closed")
	}
}

// TestTableCallOfAnImport: an import called through the module's table
// runs with the module as its caller (the one way to reach an import the
// host does not refuse): proc_exit ends the call as an exit, and WASI
// serves on.
func TestTableCallOfAnImport(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "tableexit.wasm", Module{})
	if res := call(t, l, "tableexit", `{}`); !res.IsError || res.Text() != "tool tableexit exited with status 7" {
		t.Errorf("result %+v, want the exit status 7", res)
	}
	mustRunWASI(t, h)
}

// sidecarOf reads the sidecar of testdata module file, nil when it has none.
func sidecarOf(file string) []byte {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", strings.TrimSuffix(file, ".wasm")+".tool.json"))
	if err != nil {
		return nil
	}
	return b
}
