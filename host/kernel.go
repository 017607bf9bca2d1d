package host

import (
	"context"
	_ "embed"
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host/internal/rewrite"
)

// The host modules a guest may import from (host/ABI.md).
const (
	envModule  = "extism:host/env"
	userModule = "extism:host/user"
	// goModule holds the Go functions the kernel imports; guests may not
	// import it (the rewrite's import of yield is from it).
	goModule = rewrite.KernelModule
	// wasiModule is WASI's, which wazero provides.
	wasiModule = "wasi_snapshot_preview1"
)

// kernelWasm is the Extism kernel (host/kernel/kernel.c, rebuilt by
// `make wasm-testdata`). Every instance that uses Extism memory gets its
// own kernel instance, which a guest's extism:host/env imports resolve to:
// loads and stores of Extism memory then stay in WebAssembly instead of
// exiting to Go for every 8 bytes (see RATIONALE.md "Why is the Extism
// kernel WebAssembly?").
//
//go:embed kernel.wasm
var kernelWasm []byte

// The kernel's state struct: the offsets of its fields (kernel.c, struct
// state).
const (
	stInputOff    = 0
	stInputLen    = 8
	stOutputOff   = 16
	stOutputLen   = 24
	stErrorOff    = 32
	stHeapBase    = 40
	stHeapTop     = 48
	stOutputLimit = 56
	stFreeCount   = 64
	stFreeHeads   = 72 // freeClasses heads of the free lists
)

// freeClasses is the number of free lists (kernel.c, CLASSES): list k
// holds the freed blocks whose capacity is in [2^k, 2^(k+1)).

const freeClasses = 32

const (
	blockHeader = 8          // {u32 cap; u32 len} before a block's data
	blockFree   = 0xffffffff // len of a freed block
	maxBlock    = 0xfffffff0 // the largest len a header holds
	pageSize    = 65536
)

// The kernel's failure codes (kernel.c, enum F_*).
const (
	failLoad = 1 + iota
	failStore
	failInput
	failOutput
	failNoMem
	failInputSet
	failOutputSet
)

// kernelRuntime is the compiled kernel and what every instance of it
// shares.
type kernelRuntime struct {
	mod    wazero.CompiledModule
	config wazero.ModuleConfig // instantiates mod
	state  uint32              // address of the state struct, the same in every instance
	heap   uint64              // address of the first block
	// initial is an instance's memory at start, which the module's memory
	// limit does not count: it is the host's fixed cost.
	initial int64
	// funcs are the kernel's exports a guest may import, by name.
	funcs map[string]api.FunctionDefinition
}

// newKernelRuntime compiles the kernel and reads the address of its state
// from a first instance.
func (h *Host) newKernelRuntime(ctx context.Context) (*kernelRuntime, error) {
	rt := h.runtime
	opts := h.rewriteOptions(0)
	opts.Defect = "" // the tests' defects are for guests
	prepared, err := h.prepare(kernelWasm, opts, true)
	if err != nil {
		return nil, fmt.Errorf("host: preparing the Extism kernel: %w", err)
	}
	mod, err := h.compileCached(ctx, prepared)
	if err != nil {
		return nil, fmt.Errorf("host: compiling the Extism kernel: %w", err)
	}
	kr := &kernelRuntime{
		mod: mod,
		// The kernel never reads randomness: a fixed source spares wazero
		// seeding a generator for every instance.
		config: wazero.NewModuleConfig().WithName("").WithStartFunctions().WithRandSource(zeroReader{}),
		funcs:  map[string]api.FunctionDefinition{},
	}
	for name, def := range mod.ExportedFunctions() {
		if kernelABI[name] {
			kr.funcs[name] = def
		}
	}
	inst, err := rt.InstantiateModule(ctx, mod, kr.config)
	if err != nil {
		return nil, fmt.Errorf("host: instantiating the Extism kernel: %w", err)
	}
	defer inst.Close(ctx)
	if h.opts.deadlines == deadlineInterrupt {
		if err := setStack(inst, kernelStack); err != nil {
			return nil, fmt.Errorf("host: the Extism kernel: %w", err)
		}
	}
	state, err := inst.ExportedFunction("kernel_state").Call(ctx)
	if err != nil {
		return nil, fmt.Errorf("host: the Extism kernel: %w", err)
	}
	heap, err := inst.ExportedFunction("kernel_heap").Call(ctx)
	if err != nil {
		return nil, fmt.Errorf("host: the Extism kernel: %w", err)
	}
	kr.state, kr.heap = uint32(state[0]), heap[0]
	kr.initial = int64(inst.Memory().Size())
	return kr, nil
}

// kernelABI are the functions of extism:host/env (host/ABI.md 1.1, 1.2).
var kernelABI = map[string]bool{
	"alloc": true, "free": true, "length": true, "length_unsafe": true,
	"load_u8": true, "load_u64": true, "store_u8": true, "store_u64": true,
	"input_length": true, "input_offset": true, "input_load_u8": true, "input_load_u64": true,
	"input_set": true, "output_set": true, "output_length": true, "output_offset": true,
	"error_set": true, "error_get": true, "reset": true, "memory_bytes": true,
	"config_get": true, "var_get": true, "var_set": true, "get_log_level": true,
	"log_trace": true, "log_debug": true, "log_info": true, "log_warn": true, "log_error": true,
	"http_request": true, "http_status_code": true, "http_headers": true,
}

// kernel is an instance's view of its kernel instance: the Extism memory
// blocks, the call's input, output and error, and the Extism variables.
// The Go side allocates and reads blocks itself, in the kernel's layout,
// and treats everything in that memory as written by the guest: every
// offset and length read back is checked.
type kernel struct {
	mod   api.Module
	mem   api.Memory
	state uint32
	base  uint64 // first block header (heap_base)

	vars     map[string][]byte
	varBytes int
}

func (k *kernel) get(field uint32) uint64 {
	v, _ := k.mem.ReadUint64Le(k.state + field)
	return v
}

func (k *kernel) set(field uint32, v uint64) { k.mem.WriteUint64Le(k.state+field, v) }

// init sets up a new kernel instance's state.
func (k *kernel) init(kr *kernelRuntime, mod api.Module, outputLimit int64) {
	k.mod, k.mem, k.state, k.base = mod, mod.Memory(), kr.state, kr.heap
	k.set(stHeapBase, k.base)
	k.set(stOutputLimit, uint64(outputLimit))
	k.reset()
}

// reset frees every block and clears the input, output and error.
func (k *kernel) reset() {
	for _, f := range [...]uint32{stInputOff, stInputLen, stOutputOff, stOutputLen, stErrorOff, stFreeCount} {
		k.set(f, 0)
	}
	for c := range uint32(freeClasses) {
		k.set(stFreeHeads+8*c, 0)
	}
	k.set(stHeapTop, k.base)
}

// view returns the kernel's whole memory.
func (k *kernel) view() []byte {
	b, _ := k.mem.Read(0, k.mem.Size())
	return b
}

// find returns the data of the live block at off, checked as the kernel
// checks it: in O(1), against the header just before it, since the guest
// can write any header (store_*) and a walk over the blocks would let it
// make every lookup as slow as it likes.
func (k *kernel) find(off uint64) ([]byte, bool) {
	mem := k.view()
	top := min(k.get(stHeapTop), uint64(len(mem)))
	if off < k.base+blockHeader || off > top || off&7 != 0 {
		return nil, false
	}
	h := off - blockHeader
	c := uint64(binary.LittleEndian.Uint32(mem[h:]))
	n := binary.LittleEndian.Uint32(mem[h+4:])
	if n == blockFree || uint64(n) > c || c < 8 || c&7 != 0 || top-off < c {
		return nil, false
	}
	return mem[off : off+uint64(n)], true
}

// free releases the block at off, as the kernel's free does: the last
// block gives its bytes back, another goes on its size class's free list.
func (k *kernel) free(off uint64) {
	if _, ok := k.find(off); !ok {
		return
	}
	mem := k.view()
	h := off - blockHeader
	c := uint64(binary.LittleEndian.Uint32(mem[h:]))
	if off+c == k.get(stHeapTop) {
		k.set(stHeapTop, h)
		return
	}
	class := uint32(63 - bits.LeadingZeros64(c))
	binary.LittleEndian.PutUint32(mem[h+4:], blockFree)
	binary.LittleEndian.PutUint64(mem[off:], k.get(stFreeHeads+8*class))
	k.set(stFreeHeads+8*class, h)
	k.set(stFreeCount, k.get(stFreeCount)+1)
}

// alloc returns a new block of n bytes at the end of the blocks, growing
// the kernel's memory (within the module's memory limit) as needed.
func (inst *instance) alloc(n uint64) (uint64, []byte) {
	k := &inst.k
	if n == 0 {
		return 0, nil
	}
	if n > maxBlock {
		inst.fail(limitErr(LimitMemory, inst.limits.Memory))
	}
	c := (n + 7) &^ 7
	h := k.get(stHeapTop)
	end := h + blockHeader + c
	if size := uint64(k.mem.Size()); end > size {
		pages := (end - size + pageSize - 1) / pageSize
		if pages > 1<<16 {
			inst.fail(limitErr(LimitMemory, inst.limits.Memory))
		}
		if _, ok := k.mem.Grow(uint32(pages)); !ok {
			inst.fail(limitErr(LimitMemory, inst.limits.Memory))
		}
	}
	mem := k.view()
	binary.LittleEndian.PutUint32(mem[h:], uint32(c))
	binary.LittleEndian.PutUint32(mem[h+4:], uint32(n))
	k.set(stHeapTop, end)
	off := h + blockHeader
	return off, mem[off : off+n]
}

// write copies b into a new block.
func (inst *instance) write(b []byte) uint64 {
	off, data := inst.alloc(uint64(len(b)))
	copy(data, b)
	return off
}

// writePresent is write for a result where block 0 means "none": an empty
// b still gets a block of its own, of length 0, so an empty value reads
// back as present (kv_get).
func (inst *instance) writePresent(b []byte) uint64 {
	if len(b) > 0 {
		return inst.write(b)
	}
	off, _ := inst.alloc(1)
	binary.LittleEndian.PutUint32(inst.k.view()[off-blockHeader+4:], 0)
	return off
}

// read returns a copy of block off, trapping when it is not a block or
// holds more than max bytes (so no host function copies more than it
// needs, whatever the guest passes). Offset 0 reads as empty: it is what
// alloc returns for no bytes.
func (inst *instance) read(off uint64, what string, max int64) []byte {
	b := inst.view(off, what)
	if int64(len(b)) > max {
		inst.fail(&TrapError{Reason: fmt.Sprintf("%s: %d bytes, more than the %d it takes", what, len(b), max)})
	}
	return append([]byte(nil), b...)
}

// readLimited is read for a value a Limits field bounds: past it the call
// ends with that limit's error.
func (inst *instance) readLimited(off uint64, what, limit string, max int64) []byte {
	b := inst.view(off, what)
	if int64(len(b)) > max {
		inst.fail(limitErr(limit, max))
	}
	return append([]byte(nil), b...)
}

// view returns block off in the kernel's memory, valid until the guest
// runs again.
func (inst *instance) view(off uint64, what string) []byte {
	if off == 0 {
		return []byte{}
	}
	b, ok := inst.k.find(off)
	if !ok {
		inst.fail(&TrapError{Reason: fmt.Sprintf("%s: %d is not an Extism memory block", what, off)})
	}
	return b
}

// setInput places the call input as the first block (the kernel was just
// reset) and returns it to be filled.
func (inst *instance) setInput(n int) []byte {
	k := &inst.k
	off, data := inst.alloc(uint64(n))
	k.set(stInputOff, off)
	k.set(stInputLen, uint64(n))
	return data
}

// output returns the call's output (a view of the kernel's memory, valid
// until the instance runs again) and its error message when it set one.
func (inst *instance) output() (out []byte, errMsg []byte, err error) {
	k := &inst.k
	if e := k.get(stErrorOff); e != 0 {
		errMsg, _ = k.find(e)
	}
	off, n := k.get(stOutputOff), k.get(stOutputLen)
	if n == 0 {
		return nil, errMsg, nil
	}
	if int64(n) > inst.limits.Output || n > maxBlock {
		return nil, errMsg, limitErr(LimitOutput, inst.limits.Output)
	}
	mem := k.view()
	if off > uint64(len(mem)) || n > uint64(len(mem))-off {
		return nil, errMsg, &TrapError{Reason: fmt.Sprintf("output_set: offset %d out of bounds of Extism memory", off)}
	}
	return mem[off : off+n], errMsg, nil
}

// kernelFail turns a failure the kernel reports into the call's error.
func (inst *instance) kernelFail(code uint32, arg uint64) {
	switch code {
	case failLoad:
		inst.fail(&TrapError{Reason: fmt.Sprintf("load: offset %d out of bounds of Extism memory", arg)})
	case failStore:
		inst.fail(&TrapError{Reason: fmt.Sprintf("store: offset %d out of bounds of Extism memory", arg)})
	case failInput:
		inst.fail(&TrapError{Reason: fmt.Sprintf("input_load: index %d past the input's %d bytes", arg, inst.k.get(stInputLen))})
	case failOutput:
		inst.fail(limitErr(LimitOutput, inst.limits.Output))
	case failNoMem:
		inst.fail(limitErr(LimitMemory, inst.limits.Memory))
	case failInputSet:
		inst.fail(&TrapError{Reason: fmt.Sprintf("input_set: offset %d out of bounds of Extism memory", arg)})
	case failOutputSet:
		inst.fail(&TrapError{Reason: fmt.Sprintf("output_set: offset %d out of bounds of Extism memory", arg)})
	}
	inst.fail(&TrapError{Reason: fmt.Sprintf("the Extism kernel failed (code %d)", code)})
}

type hostFunc struct {
	name    string
	params  []api.ValueType
	results []api.ValueType
	fn      func(inst *instance, stack []uint64)
}

var (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

func sig(p ...api.ValueType) []api.ValueType { return p }

// goFuncs are the kernel's imports: its failure report and the functions of
// extism:host/env that need the host (config, vars, logs, HTTP).
var goFuncs = []hostFunc{
	{"fail", sig(i32, i64), nil, func(inst *instance, s []uint64) { inst.kernelFail(uint32(s[0]), s[1]) }},
	{"config_get", sig(i64), sig(i64), func(inst *instance, s []uint64) {
		key := string(inst.read(s[0], "config_get", maxNameBytes))
		v, ok := inst.config(key)
		if !ok {
			s[0] = 0
			return
		}
		s[0] = inst.write([]byte(v))
	}},
	{"var_get", sig(i64), sig(i64), func(inst *instance, s []uint64) {
		v, ok := inst.k.vars[string(inst.read(s[0], "var_get", maxNameBytes))]
		if !ok {
			s[0] = 0
			return
		}
		s[0] = inst.write(v)
	}},
	{"var_set", sig(i64, i64), nil, func(inst *instance, s []uint64) { inst.varSet(s[0], s[1]) }},
	{"get_log_level", nil, sig(i32), func(inst *instance, s []uint64) { s[0] = uint64(inst.logLevel()) }},
	{"log_trace", sig(i64), nil, func(inst *instance, s []uint64) { inst.log(levelTrace, s[0]) }},
	{"log_debug", sig(i64), nil, func(inst *instance, s []uint64) { inst.log(levelDebug, s[0]) }},
	{"log_info", sig(i64), nil, func(inst *instance, s []uint64) { inst.log(levelInfo, s[0]) }},
	{"log_warn", sig(i64), nil, func(inst *instance, s []uint64) { inst.log(levelWarn, s[0]) }},
	{"log_error", sig(i64), nil, func(inst *instance, s []uint64) { inst.log(levelError, s[0]) }},
	// Capability functions: importing them needs a grant (capabilityOf).
	{"http_request", sig(i64, i64), sig(i64), func(inst *instance, s []uint64) { s[0] = inst.httpRequest(s[0], s[1]) }},
	{"http_status_code", nil, sig(i32), func(inst *instance, s []uint64) { s[0] = uint64(uint32(inst.httpStatus)) }},
	{"http_headers", nil, sig(i64), func(inst *instance, s []uint64) { s[0] = inst.httpHeaders() }},
}

// userFuncs are the host's own capability functions (extism:host/user).
var userFuncs = []hostFunc{
	{"kv_get", sig(i64, i64), sig(i64), func(inst *instance, s []uint64) { s[0] = inst.kvGet(s[0], s[1]) }},
	{"kv_set", sig(i64, i64, i64), nil, func(inst *instance, s []uint64) { inst.kvSet(s[0], s[1], s[2]) }},
	{"kv_delete", sig(i64, i64), nil, func(inst *instance, s []uint64) { inst.kvDelete(s[0], s[1]) }},
	{"kv_keys", sig(i64, i64), sig(i64), func(inst *instance, s []uint64) { s[0] = inst.kvKeys(s[0], s[1]) }},
	{"tool_call", sig(i64), sig(i64), func(inst *instance, s []uint64) { s[0] = inst.toolCall(s[0]) }},
}

// capabilityOf returns the grant kind importing module.name needs, or ""
// when it needs none.
func capabilityOf(module, name string) string {
	switch module + "." + name {
	case envModule + ".http_request", envModule + ".http_status_code", envModule + ".http_headers":
		return "net"
	case userModule + ".kv_get", userModule + ".kv_set", userModule + ".kv_delete", userModule + ".kv_keys":
		return "kv"
	case userModule + ".tool_call":
		return "tools"
	}
	return ""
}

const (
	maxVarBytes = 1 << 20
	// maxVars bounds the variables of an instance: each costs a map
	// entry beside its bytes.
	maxVars = 1024
	// maxNameBytes bounds a config key or variable name.
	maxNameBytes = 4 << 10
)

func (inst *instance) varSet(nameOff, valueOff uint64) {
	k := &inst.k
	name := string(inst.read(nameOff, "var_set", maxNameBytes))
	if old, ok := k.vars[name]; ok {
		k.varBytes -= len(name) + len(old)
		delete(k.vars, name)
	}
	if valueOff == 0 {
		return
	}
	if len(k.vars) >= maxVars {
		inst.fail(&TrapError{Reason: fmt.Sprintf("var_set: at most %d variables per instance", maxVars)})
	}
	v := inst.read(valueOff, "var_set", maxVarBytes)
	if k.varBytes+len(name)+len(v) > maxVarBytes {
		inst.fail(&TrapError{Reason: "var_set: variables are limited to 1 MiB per instance"})
	}
	if k.vars == nil {
		k.vars = map[string][]byte{}
	}
	k.vars[name] = v
	k.varBytes += len(name) + len(v)
}

// instantiateHostModules registers the kernel's Go imports and
// extism:host/user (the host's own functions and the application's of that
// namespace) on the runtime. The functions find their instance in the
// call's context.
func instantiateHostModules(ctx context.Context, rt wazero.Runtime, fs functions) error {
	b := rt.NewHostModuleBuilder(goModule)
	b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(yield), []api.ValueType{i32}, nil).Export(rewrite.YieldImport)
	addHostFuncs(b, goFuncs)
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("host: instantiating %s: %w", goModule, err)
	}
	b = rt.NewHostModuleBuilder(userModule)
	addOwnUserFunctions(b)
	fs.register(b, userModule)
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("host: instantiating %s: %w", userModule, err)
	}
	return fs.instantiate(ctx, rt)
}

// addOwnUserFunctions adds the host's own functions of extism:host/user.
func addOwnUserFunctions(b wazero.HostModuleBuilder) {
	addHostFuncs(b, userFuncs)
	addHostFuncs(b, notifyFuncs)
}

// addHostFuncs adds funcs to b, each checking for a stop before it runs.
func addHostFuncs(b wazero.HostModuleBuilder, funcs []hostFunc) {
	for _, f := range funcs {
		fn := f.fn
		b.NewFunctionBuilder().
			WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
				inst, ok := ctx.Value(instanceKey{}).(*instance)
				if !ok {
					panic(&TrapError{Reason: "host function called outside a tool call"})
				}
				// A guest calling the host in a loop must not outlast
				// its deadline because each call is quick: every host
				// function is a place to stop it, as yield is.
				inst.checkStop()
				inst.inHost.Store(true)
				fn(inst, stack)
				inst.inHost.Store(false)
			}), f.params, f.results).
			Export(f.name)
	}
}

// zeroReader reads zeros.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
