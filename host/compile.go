package host

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// ABI is how the host talks to a module.
type ABI string

// The two tool-module ABIs of DESIGN.md §3.
const (
	ABIExtism      ABI = "extism"       // exports describe/call, Extism kernel I/O
	ABIWASICommand ABI = "wasi-command" // exports _start, JSON on stdin/stdout
)

// compiledEntry is one compiled module, shared by every Loaded module with
// the same bytes.
type compiledEntry struct {
	sha     string
	ready   chan struct{} // closed when mod/err are set
	mod     wazero.CompiledModule
	abi     ABI
	size    int      // bytes of the module
	minMem  int64    // bytes the module's memory needs at start
	imports []string // "module.name" of every imported function
	kernel  bool     // the module uses Extism memory: it needs a kernel
	err     error
	refs    int
}

// compile returns the compiled module for b, compiling it once per sha256
// per process (and once per machine thanks to the disk cache). The caller
// must release it.
func (h *Host) compile(ctx context.Context, sha string, b []byte) (*compiledEntry, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	e, ok := h.compiled[sha]
	if ok {
		e.refs++
		h.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			h.release(e)
			return nil, ctx.Err()
		}
		if e.err != nil {
			h.release(e)
			return nil, e.err
		}
		return e, nil
	}
	e = &compiledEntry{sha: sha, ready: make(chan struct{}), refs: 1}
	h.compiled[sha] = e
	h.mu.Unlock()

	e.err = e.build(ctx, h, b)
	close(e.ready)
	if e.err != nil {
		h.release(e)
		return nil, e.err
	}
	return e, nil
}

// rewriteOptions are the rewrites every module gets (see rewrite).
func (h *Host) rewriteOptions() rewriteOptions {
	return rewriteOptions{interrupt: h.opts.deadlines == deadlineInterrupt, mergeData: true}
}

// compileCached compiles b, through the compilation cache. An unreadable
// cache entry (a torn write, a disk error) is not fatal: it is only a
// cache, so it is dropped and the module compiled again.
func (h *Host) compileCached(ctx context.Context, b []byte) (wazero.CompiledModule, error) {
	mod, err := h.runtime.CompileModule(ctx, b)
	if err != nil && strings.Contains(err.Error(), "compilationcache:") {
		h.purgeCache()
		mod, err = h.runtime.CompileModule(ctx, b)
	}
	return mod, err
}

func (e *compiledEntry) build(ctx context.Context, h *Host, b []byte) error {
	minPages, err := scanMemory(b)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	e.minMem = int64(minPages) << 16
	e.size = len(b)
	opts := h.rewriteOptions()
	key := fmt.Sprintf("%s-%s-%v-%v", e.sha, rewriteVersion, opts.interrupt, opts.mergeData)
	var mod wazero.CompiledModule
	if len(b) >= artifactMinSize {
		if prepared := h.artifacts.get("prepared", key); prepared != nil {
			mod, err = h.compileCached(ctx, prepared)
		}
	}
	if mod == nil {
		prepared, rerr := rewrite(b, opts)
		if rerr != nil {
			// Let the runtime say what is wrong with a module it refuses
			// as well; one it accepts is refused rather than run
			// unstoppable.
			if _, err := h.runtime.CompileModule(ctx, b); err == nil {
				return rerr
			}
			prepared = b
		}
		mod, err = h.compileCached(ctx, prepared)
		if err == nil && rerr == nil && len(b) >= artifactMinSize {
			h.artifacts.put("prepared", key, prepared)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	e.mod = mod
	exports := mod.ExportedFunctions()
	switch {
	case exports["call"] != nil:
		e.abi = ABIExtism
	case exports["_start"] != nil:
		e.abi = ABIWASICommand
	default:
		_ = mod.Close(ctx)
		return ErrNoABI
	}
	e.kernel = e.abi == ABIExtism
	for _, f := range mod.ImportedFunctions() {
		m, n, _ := f.Import()
		if m == goModule && n == yieldImport {
			continue // added by the rewrite
		}
		e.imports = append(e.imports, m+"."+n)
		if m == envModule || m == userModule {
			e.kernel = true
		}
	}
	return nil
}

// release drops one reference; the last one frees the compiled code.
func (h *Host) release(e *compiledEntry) {
	h.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last && h.compiled[e.sha] == e {
		delete(h.compiled, e.sha)
	}
	h.mu.Unlock()
	if last && e.mod != nil {
		_ = e.mod.Close(context.Background())
	}
}

// checkImports verifies every import of the module against what the host
// provides and what the grants allow, before anything is instantiated.
func (h *Host) checkImports(name string, e *compiledEntry, granted map[string]bool) error {
	if mems := e.mod.ImportedMemories(); len(mems) > 0 {
		m, n, _ := mems[0].Import()
		return &ImportError{Module: name, Import: m + "." + n}
	}
	for _, f := range e.mod.ImportedFunctions() {
		m, n, _ := f.Import()
		imp := &ImportError{Module: name, Import: m + "." + n}
		var (
			def api.FunctionDefinition
			ok  bool
		)
		switch m {
		case goModule:
			// The rewrite's yield; the kernel's other imports are the
			// kernel's alone.
			ok = n == yieldImport && len(f.ParamTypes()) == 0 && len(f.ResultTypes()) == 0
			if ok {
				continue
			}
		case envModule:
			def, ok = h.kernel.funcs[n]
		case userModule, wasi_snapshot_preview1.ModuleName:
			def, ok = h.runtime.Module(m).ExportedFunctionDefinitions()[n]
		}
		if !ok {
			return imp
		}
		if !sameSignature(def, f) {
			imp.Detail = fmt.Sprintf("want %s, module has %s", signature(def), signature(f))
			return imp
		}
		if need := capabilityOf(m, n); need != "" && !granted[need] {
			imp.Need = need
			return imp
		}
	}
	return nil
}

func sameSignature(a, b api.FunctionDefinition) bool {
	return string(a.ParamTypes()) == string(b.ParamTypes()) && string(a.ResultTypes()) == string(b.ResultTypes())
}

func signature(f api.FunctionDefinition) string {
	s := "("
	for i, t := range f.ParamTypes() {
		if i > 0 {
			s += ", "
		}
		s += api.ValueTypeName(t)
	}
	s += ")"
	if r := f.ResultTypes(); len(r) > 0 {
		s += " -> "
		for i, t := range r {
			if i > 0 {
				s += ", "
			}
			s += api.ValueTypeName(t)
		}
	}
	return s
}

var errBadBinary = errors.New("truncated or malformed section")

// scanMemory returns the initial page count of the module's memory (0 when
// it has none). It reads the binary itself because wazero exposes memory
// limits only for exported memories, and a module must be refused before
// an instance tries to allocate more than its limit.
func scanMemory(b []byte) (uint32, error) {
	if len(b) < 8 || string(b[:4]) != "\x00asm" {
		return 0, errors.New("missing the \\0asm header")
	}
	r := reader{b: b, p: 8}
	for !r.done() {
		id := r.byte()
		body := r.take(int(r.u32()))
		if r.err != nil {
			return 0, errBadBinary
		}
		if id != secMemory {
			continue
		}
		mem := reader{b: body}
		if mem.u32() == 0 {
			return 0, nil
		}
		mem.byte() // limits flags
		pages := mem.u32()
		if mem.err != nil || pages > 65536 {
			return 0, errBadBinary
		}
		return pages, nil
	}
	return 0, nil
}
