package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// kernelCall calls one of the kernel's exports the way a guest would.
func kernelCall(t *testing.T, inst *instance, name string, args ...uint64) (uint64, error) {
	t.Helper()
	f := inst.k.Module().ExportedFunction(name)
	if f == nil {
		t.Fatalf("the kernel exports no %s", name)
	}
	ctx := context.WithValue(context.Background(), instanceKey{}, inst)
	stack := append(args, 0)
	inst.call.abort = nil
	err := f.CallWithStack(ctx, stack)
	if err != nil && inst.call.abort != nil {
		err = inst.call.abort
	}
	if err != nil {
		if kerr := inst.kernelFailure(); kerr != nil {
			err = kerr
		}
	}
	return stack[0], err
}

// TestKernelBlocks: the kernel's allocator and the Go side's view of it
// agree: blocks are distinct, lengths are right, freed blocks are reused,
// forged offsets are not blocks, and accesses outside the blocks trap with
// a message saying so.
func TestKernelBlocks(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "echo.wasm", Module{})
	inst, err := l.newInstance(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close()
	must := func(name string, args ...uint64) uint64 {
		t.Helper()
		v, err := kernelCall(t, inst, name, args...)
		if err != nil {
			t.Fatalf("%s%v: %v", name, args, err)
		}
		return v
	}

	if got := must("alloc", 0); got != 0 {
		t.Errorf("alloc(0) = %d, want 0 (as in Extism)", got)
	}
	a := must("alloc", 10)
	b := must("alloc", 100)
	g := inst.Write([]byte("from the host"))
	c := must("alloc", 3)
	offs := []uint64{a, b, g, c}
	for i, off := range offs {
		if off == 0 || off%8 != 0 {
			t.Fatalf("block %d at %d", i, off)
		}
		for _, other := range offs[i+1:] {
			if other == off {
				t.Fatalf("two blocks at %d", off)
			}
		}
	}
	for off, n := range map[uint64]uint64{a: 10, b: 100, g: 13, c: 3} {
		if got := must("length", off); got != n {
			t.Errorf("length(%d) = %d, want %d", off, got, n)
		}
		if got := must("length_unsafe", off); got != n {
			t.Errorf("length_unsafe(%d) = %d, want %d", off, got, n)
		}
		if data, ok := inst.k.Find(off); !ok || uint64(len(data)) != n {
			t.Errorf("Go side: block %d has %d bytes (%v), want %d", off, len(data), ok, n)
		}
	}
	if got := string(inst.Read(g, "test", 1<<20)); got != "from the host" {
		t.Errorf("read back %q", got)
	}
	for _, forged := range []uint64{a + 8, b - 8, 1, 1 << 40} {
		if got := must("length", forged); got != 0 {
			t.Errorf("length(%d) = %d, want 0: not a block", forged, got)
		}
		if _, ok := inst.k.Find(forged); ok {
			t.Errorf("Go side: %d is taken for a block", forged)
		}
	}

	// Headers the guest forged (store_u64 reaches them): a length past
	// the block's capacity, a capacity past the blocks' end. Neither is a
	// block, for the kernel or for the host.
	for _, f := range []struct {
		name     string
		off      uint64
		cap, len uint64
	}{
		{"length past capacity", b, 104, 200},
		{"capacity past the end", c, 1 << 20, 3},
	} {
		must("store_u64", f.off-8, f.cap|f.len<<32)
		if got := must("length", f.off); got != 0 {
			t.Errorf("%s: length = %d, want 0", f.name, got)
		}
		if _, ok := inst.k.Find(f.off); ok {
			t.Errorf("%s: the host takes it for a block", f.name)
		}
	}
	must("store_u64", b-8, 104|100<<32)
	must("store_u64", c-8, 8|3<<32)

	// store, load, and the bounds of both.
	must("store_u64", b+8, 0x0102030405060708)
	if got := must("load_u64", b+8); got != 0x0102030405060708 {
		t.Errorf("load_u64 = %#x", got)
	}
	if got := must("load_u8", b+8); got != 8 {
		t.Errorf("load_u8 = %d", got)
	}
	top := c + 8 // c's data is rounded up to 8 bytes: the blocks end here
	for _, f := range []struct {
		name string
		args []uint64
		want string
	}{
		{"load_u64", []uint64{top - 7}, "out of bounds of Extism memory"},
		{"load_u8", []uint64{8}, "out of bounds of Extism memory"},
		{"store_u64", []uint64{1 << 33, 1}, "out of bounds of Extism memory"},
		{"store_u8", []uint64{top, 1}, "out of bounds of Extism memory"},
		{"input_load_u64", []uint64{0}, "past the input"},
		{"output_set", []uint64{a, 1 << 40}, "output limit"},
		{"output_set", []uint64{top, 16}, "out of bounds of Extism memory"},
	} {
		_, err := kernelCall(t, inst, f.name, f.args...)
		if err == nil || !strings.Contains(err.Error(), f.want) {
			t.Errorf("%s%v: %v, want an error containing %q", f.name, f.args, err, f.want)
		}
	}

	// A freed block is reused for an allocation that fits; freeing the
	// last block gives its bytes back.
	must("free", a)
	if got := must("length", a); got != 0 {
		t.Errorf("length of a freed block = %d", got)
	}
	if d := must("alloc", 7); d != a {
		t.Errorf("alloc(7) after free = %d, want the freed block %d", d, a)
	}
	before := must("memory_bytes")
	inst.k.Free(c)
	if after := must("memory_bytes"); after >= before {
		t.Errorf("memory_bytes %d after freeing the last block, was %d", after, before)
	}
	must("reset")
	if got := must("memory_bytes"); got != 0 {
		t.Errorf("memory_bytes after reset = %d", got)
	}
	if got := must("length", b); got != 0 {
		t.Errorf("a block survived reset")
	}
}

// TestKernelMemoryLimit: Extism memory counts against the module's memory
// limit, whoever allocates it.
func TestKernelMemoryLimit(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "echo.wasm", Module{Limits: Limits{Memory: 4 << 20}})
	inst, err := l.newInstance(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close()
	_, err = kernelCall(t, inst, "alloc", 8<<20)
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != LimitMemory {
		t.Fatalf("alloc past the limit: %v", err)
	}
	inst.call.exceeded = nil
	err = inst.guard(func() { inst.Write(make([]byte, 8<<20)) })
	if !errors.As(err, &le) || le.Limit != LimitMemory {
		t.Fatalf("a host write past the limit: %v", err)
	}
}

// TestKernelFailureEndsCall: a kernel function that fails inside a tool
// call (it records why and traps, out of reach of the guest) ends the call
// with the kernel's reason and outcome, whatever the call's shape; a trap
// in the guest's own code stays a plain trap, on a fresh instance and on
// one kept after a kernel failure.
func TestKernelFailureEndsCall(t *testing.T) {
	t.Parallel()
	for _, reuse := range []bool{false, true} {
		h, rec := newTestHost(t, Options{})
		l := load(t, h, "kernelfail.wasm", Module{Reuse: reuse, Limits: Limits{Output: 1 << 20}})
		for _, c := range []struct {
			tool, want string
			outcome    Outcome
		}{
			{"load", "load: offset 8589934592 out of bounds of Extism memory", OutcomeTrap},
			{"trap", "unreachable", OutcomeTrap},
			{"store", "store: offset 8589934592 out of bounds of Extism memory", OutcomeTrap},
			// The call document {"params":{"name":"input","arguments":{}}}
			// is 42 bytes.
			{"input", "input_load: index 42 past the input's 42 bytes", OutcomeTrap},
			{"inputset", "input_set: offset 8589934592 out of bounds of Extism memory", OutcomeTrap},
			{"outputset", "output_set: offset 8589934592 out of bounds of Extism memory", OutcomeTrap},
			{"trap", "unreachable", OutcomeTrap},
			{"outputlimit", "output limit", OutcomeLimit},
			{"alloc", "memory limit", OutcomeLimit},
			{"trap", "unreachable", OutcomeTrap},
		} {
			res := call(t, l, c.tool, `{}`)
			if !res.IsError || !strings.Contains(res.Text(), c.want) {
				t.Errorf("reuse %v: %s: %q, want an error containing %q", reuse, c.tool, res.Text(), c.want)
			}
			if c.tool == "trap" && strings.Contains(res.Text(), "Extism") {
				t.Errorf("reuse %v: a guest's own trap reported as the kernel's: %q", reuse, res.Text())
			}
			if got := rec.last(t).Outcome; got != c.outcome {
				t.Errorf("reuse %v: %s: outcome %s, want %s", reuse, c.tool, got, c.outcome)
			}
		}
	}
}

// TestKernelFailureCleared: the failure a kernel function recorded does not
// outlive the run: the next run's reset clears it, so a later trap of the
// guest's own is not taken for the kernel's.
func TestKernelFailureCleared(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "echo.wasm", Module{})
	inst, err := l.newInstance(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close()
	if _, err := kernelCall(t, inst, "load_u64", 1<<33); err == nil || !strings.Contains(err.Error(), "out of bounds") {
		t.Fatalf("load_u64 past the blocks: %v", err)
	}
	if inst.kernelFailure() == nil {
		t.Fatal("the kernel's failure was not recorded")
	}
	inst.k.Reset()
	if err := inst.kernelFailure(); err != nil {
		t.Errorf("after reset, a failure remains: %v", err)
	}
}

// TestKernelFailureNotForgeable: the guest cannot write the failure the
// host reads after a trap: the kernel's state lies below the blocks, and
// a store_u64 aimed at it is itself refused, with its own reason.
func TestKernelFailureNotForgeable(t *testing.T) {
	t.Parallel()
	h, _ := newTestHost(t, Options{})
	l := load(t, h, "echo.wasm", Module{})
	inst, err := l.newInstance(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.close()
	state, err := kernelCall(t, inst, "kernel_state")
	if err != nil {
		t.Fatal(err)
	}
	// fail_code follows the input, output, error, heap, limit and free
	// list fields (kernel.c, struct state): 9 + 32 words.
	failCode := state + 8*(9+32)
	for _, off := range []uint64{failCode, failCode + 8, state} {
		_, err := kernelCall(t, inst, "store_u64", off, 99)
		want := fmt.Sprintf("tool crashed: store: offset %d out of bounds of Extism memory", off)
		if err == nil || err.Error() != want {
			t.Errorf("store_u64 at %d (the kernel's state): %v, want %q", off, err, want)
		}
	}
}
