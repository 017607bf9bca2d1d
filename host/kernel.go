package host

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// The host modules a guest may import from (host/ABI.md).
const (
	envModule  = "extism:host/env"
	userModule = "extism:host/user"
)

// kernel is the Extism kernel of one instance: memory blocks that live in
// host memory and are named by offsets, plus the call's input, output and
// error. The host implements it in Go, rather than running Extism's kernel
// module, so that every capability function goes through the host's checks
// (see RATIONALE.md "Why our own Extism kernel?").
type kernel struct {
	mem    []byte            // offset 0 is never a block
	blocks map[uint64]uint64 // live block offset -> length
	free   []block           // freed blocks, reused first-fit

	input, inputLen   uint64
	output, outputLen uint64
	errOff            uint64

	vars     map[string][]byte
	varBytes int
}

type block struct{ off, n uint64 }

const blockAlign = 8

// reset frees every block.
func (k *kernel) reset() {
	k.mem = k.mem[:blockAlign]
	clear(k.blocks)
	k.free = k.free[:0]
	k.input, k.inputLen, k.output, k.outputLen, k.errOff = 0, 0, 0, 0, 0
}

// length returns the length of block off, 0 when off is not a live block.
func (k *kernel) length(off uint64) uint64 { return k.blocks[off] }

// bytes returns the contents of block off, nil when it is not a block.
func (k *kernel) bytes(off uint64) ([]byte, bool) {
	n, ok := k.blocks[off]
	if !ok {
		return nil, false
	}
	return k.mem[off : off+n], true
}

// alloc returns a new block of n bytes, or an error naming the memory
// limit when the instance's budget (limit minus linear memory) is spent.
func (inst *instance) alloc(n uint64) uint64 {
	k := &inst.k
	if n == 0 {
		n = 1 // a zero-length block still needs a distinct offset
	}
	for i, b := range k.free {
		if b.n >= n {
			k.free = append(k.free[:i], k.free[i+1:]...)
			k.blocks[b.off] = n
			clear(k.mem[b.off : b.off+n])
			return b.off
		}
	}
	off := (uint64(len(k.mem)) + blockAlign - 1) &^ (blockAlign - 1)
	end := off + n
	if int64(end)+inst.linear.size() > inst.limits.Memory {
		inst.fail(limitErr(LimitMemory, inst.limits.Memory))
	}
	if end > uint64(cap(k.mem)) {
		c := uint64(cap(k.mem)) * 2
		if c < end {
			c = end
		}
		nm := make([]byte, end, c)
		copy(nm, k.mem)
		k.mem = nm
	} else {
		k.mem = k.mem[:end]
	}
	k.blocks[off] = n
	inst.notePeak()
	return off
}

// freeBlock releases block off; the last block gives its bytes back.
func (k *kernel) freeBlock(off uint64) {
	n, ok := k.blocks[off]
	if !ok {
		return
	}
	delete(k.blocks, off)
	if off+n == uint64(len(k.mem)) {
		k.mem = k.mem[:off]
		return
	}
	if len(k.free) < 256 {
		k.free = append(k.free, block{off, n})
	}
}

// write copies b into a new block.
func (inst *instance) write(b []byte) uint64 {
	off := inst.alloc(uint64(len(b)))
	copy(inst.k.mem[off:], b)
	return off
}

// read returns a copy of block off, trapping when it is not a block.
func (inst *instance) read(off uint64, what string) []byte {
	b, ok := inst.k.bytes(off)
	if !ok {
		inst.fail(&TrapError{Reason: fmt.Sprintf("%s: %d is not an Extism memory block", what, off)})
	}
	return append([]byte(nil), b...)
}

// span returns k.mem[off:off+n], trapping out of bounds.
func (inst *instance) span(off, n uint64, what string) []byte {
	if off+n < off || off+n > uint64(len(inst.k.mem)) {
		inst.fail(&TrapError{Reason: fmt.Sprintf("%s: offset %d out of bounds of Extism memory", what, off)})
	}
	return inst.k.mem[off : off+n]
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

// kernelFuncs are the always-available functions of extism:host/env.
var kernelFuncs = []hostFunc{
	{"alloc", sig(i64), sig(i64), func(inst *instance, s []uint64) { s[0] = inst.alloc(s[0]) }},
	{"free", sig(i64), nil, func(inst *instance, s []uint64) { inst.k.freeBlock(s[0]) }},
	{"length", sig(i64), sig(i64), func(inst *instance, s []uint64) { s[0] = inst.k.length(s[0]) }},
	{"length_unsafe", sig(i64), sig(i64), func(inst *instance, s []uint64) { s[0] = inst.k.length(s[0]) }},
	{"load_u8", sig(i64), sig(i32), func(inst *instance, s []uint64) { s[0] = uint64(inst.span(s[0], 1, "load_u8")[0]) }},
	{"load_u64", sig(i64), sig(i64), func(inst *instance, s []uint64) {
		s[0] = binary.LittleEndian.Uint64(inst.span(s[0], 8, "load_u64"))
	}},
	{"store_u8", sig(i64, i32), nil, func(inst *instance, s []uint64) { inst.span(s[0], 1, "store_u8")[0] = byte(s[1]) }},
	{"store_u64", sig(i64, i64), nil, func(inst *instance, s []uint64) {
		binary.LittleEndian.PutUint64(inst.span(s[0], 8, "store_u64"), s[1])
	}},
	{"input_length", nil, sig(i64), func(inst *instance, s []uint64) { s[0] = inst.k.inputLen }},
	{"input_offset", nil, sig(i64), func(inst *instance, s []uint64) { s[0] = inst.k.input }},
	{"input_load_u8", sig(i64), sig(i32), func(inst *instance, s []uint64) {
		s[0] = uint64(inst.inputSpan(s[0], 1)[0])
	}},
	{"input_load_u64", sig(i64), sig(i64), func(inst *instance, s []uint64) {
		s[0] = binary.LittleEndian.Uint64(inst.inputSpan(s[0], 8))
	}},
	{"input_set", sig(i64, i64), nil, func(inst *instance, s []uint64) {
		inst.span(s[0], s[1], "input_set")
		inst.k.input, inst.k.inputLen = s[0], s[1]
	}},
	{"output_set", sig(i64, i64), nil, func(inst *instance, s []uint64) {
		if int64(s[1]) > inst.limits.Output || int64(s[1]) < 0 {
			inst.fail(limitErr(LimitOutput, inst.limits.Output))
		}
		inst.span(s[0], s[1], "output_set")
		inst.k.output, inst.k.outputLen = s[0], s[1]
	}},
	{"output_length", nil, sig(i64), func(inst *instance, s []uint64) { s[0] = inst.k.outputLen }},
	{"output_offset", nil, sig(i64), func(inst *instance, s []uint64) { s[0] = inst.k.output }},
	{"error_set", sig(i64), nil, func(inst *instance, s []uint64) {
		if s[0] != 0 {
			inst.span(s[0], inst.k.length(s[0]), "error_set")
		}
		inst.k.errOff = s[0]
	}},
	{"error_get", nil, sig(i64), func(inst *instance, s []uint64) { s[0] = inst.k.errOff }},
	{"reset", nil, nil, func(inst *instance, s []uint64) { inst.k.reset() }},
	{"memory_bytes", nil, sig(i64), func(inst *instance, s []uint64) { s[0] = uint64(len(inst.k.mem)) }},
	{"config_get", sig(i64), sig(i64), func(inst *instance, s []uint64) {
		key := string(inst.read(s[0], "config_get"))
		v, ok := inst.config(key)
		if !ok {
			s[0] = 0
			return
		}
		s[0] = inst.write([]byte(v))
	}},
	{"var_get", sig(i64), sig(i64), func(inst *instance, s []uint64) {
		v, ok := inst.k.vars[string(inst.read(s[0], "var_get"))]
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

// inputSpan returns input bytes [i, i+n), trapping past the input.
func (inst *instance) inputSpan(i, n uint64) []byte {
	if i+n < i || i+n > inst.k.inputLen {
		inst.fail(&TrapError{Reason: fmt.Sprintf("input_load: index %d past the input's %d bytes", i, inst.k.inputLen)})
	}
	return inst.k.mem[inst.k.input+i : inst.k.input+i+n]
}

const maxVarBytes = 1 << 20

func (inst *instance) varSet(nameOff, valueOff uint64) {
	k := &inst.k
	name := string(inst.read(nameOff, "var_set"))
	if old, ok := k.vars[name]; ok {
		k.varBytes -= len(name) + len(old)
		delete(k.vars, name)
	}
	if valueOff == 0 {
		return
	}
	v := inst.read(valueOff, "var_set")
	if k.varBytes+len(name)+len(v) > maxVarBytes {
		inst.fail(&TrapError{Reason: "var_set: variables are limited to 1 MiB per instance"})
	}
	if k.vars == nil {
		k.vars = map[string][]byte{}
	}
	k.vars[name] = v
	k.varBytes += len(name) + len(v)
}

// instantiateHostModules registers extism:host/env and extism:host/user on
// the runtime. The functions find their instance in the call's context.
func instantiateHostModules(ctx context.Context, rt wazero.Runtime) error {
	for _, m := range []struct {
		name  string
		funcs []hostFunc
	}{{envModule, kernelFuncs}, {userModule, userFuncs}} {
		b := rt.NewHostModuleBuilder(m.name)
		for _, f := range m.funcs {
			fn := f.fn
			b.NewFunctionBuilder().
				WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, _ api.Module, stack []uint64) {
					inst, ok := ctx.Value(instanceKey{}).(*instance)
					if !ok {
						panic(&TrapError{Reason: "host function called outside a tool call"})
					}
					fn(inst, stack)
				}), f.params, f.results).
				Export(f.name)
		}
		if _, err := b.Instantiate(ctx); err != nil {
			return fmt.Errorf("host: instantiating %s: %w", m.name, err)
		}
	}
	return nil
}
