package host

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/autoagent-go/autoagent/host/internal/rewrite"
	"github.com/autoagent-go/autoagent/host/internal/wasmbin"
)

// ABI is how the host talks to a module.
type ABI string

// The two tool-module ABIs of docs/ARCHITECTURE.md §3.
const (
	ABIExtism      ABI = "extism"       // exports describe/call, Extism kernel I/O
	ABIWASICommand ABI = "wasi-command" // exports _start, JSON on stdin/stdout
)

// compiledEntry is one compiled module, shared by every Loaded module with
// the same bytes.
type compiledEntry struct {
	gen   *runtimeGen // the runtime it is compiled in
	sha   string
	key   string        // sha256 and table limit: the compiled map's key
	ready chan struct{} // closed when mod/err are set
	// abandoned: the compilation failed because its builder's context
	// ended; set before ready is closed.
	abandoned bool
	mod       wazero.CompiledModule
	abi       ABI
	size      int      // bytes of the module
	minMem    int64    // bytes the module's memory needs at start
	imports   []string // "module.name" of every imported function
	kernel    bool     // the module uses Extism memory: it needs a kernel
	// v2: a hyper-mcp v2 plugin, described by list_tools and called
	// through call_tool.
	v2 bool
	// stateful: the module imports notify_*_list_changed, so its lists
	// depend on its instance's memory: one instance serves every call.
	stateful bool
	// stuck is set by the watchdog when a call of the module stopped
	// returning to the host: no new call starts.
	stuck atomic.Bool
	// otherImport is the first table or global the module imports (no
	// host module provides one), "" when it imports none.
	otherImport string
	// inits are the initialisers the module exports, in the order an
	// instance runs them (see instance.initialise): found once here, as
	// looking up a missing export formats an error.
	inits initExports
	// snapGlobals name the module's mutable globals as the rewrite
	// exported them, and snapSafe says whether the rewrite found the
	// module safe to restore from a snapshot (see rewrite.SnapshotInfo).
	snapGlobals []string
	snapSafe    bool
	// sharedSeeds: the module exports sharedSeedsExport, declaring what
	// Module.SharedSeeds declares.
	sharedSeeds bool
	// resetSafe says whether a used instance may be reset to the
	// snapshot: a call changes nothing of the module but its memory and
	// globals (see rewrite.SnapshotInfo, Loaded.resetsOn).
	resetSafe bool
	err       error
	refs      int
}

// compile returns the compiled module for b, compiling it once per sha256
// and table limit per process (and once per machine thanks to the disk
// cache). The caller must release it.
func (h *Host) compile(ctx context.Context, sha string, b []byte, tables int64) (*compiledEntry, error) {
	for {
		e, err, again := h.compileOnce(ctx, sha, b, tables)
		if !again {
			return e, err
		}
	}
}

// compileOnce is one attempt of compile. A caller that waited for another
// one's compilation, which that caller's context cancelled, tries again
// (again is true): one caller giving up does not fail the others.
func (h *Host) compileOnce(ctx context.Context, sha string, b []byte, tables int64) (_ *compiledEntry, _ error, again bool) {
	key := fmt.Sprintf("%s/%d", sha, tables)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed, false
	}
	e, ok := h.compiled[key]
	if ok {
		e.refs++
		h.mu.Unlock()
		select {
		case <-e.ready:
		case <-ctx.Done():
			h.release(e)
			return nil, ctx.Err(), false
		}
		if e.err != nil {
			h.release(e)
			return nil, e.err, e.abandoned && ctx.Err() == nil
		}
		if e.stuck.Load() {
			h.release(e)
			return nil, errStuck(sha), false
		}
		return e, nil, false
	}
	e = &compiledEntry{sha: sha, key: key, ready: make(chan struct{}), refs: 1}
	h.compiled[key] = e
	h.mu.Unlock()

	if e.gen, e.err = h.currentGen(ctx); e.err == nil {
		if hook := h.opts.buildHook; hook != nil {
			e.err = hook(ctx)
		}
		if e.err == nil {
			e.err = e.build(ctx, h, b, tables)
		}
	}
	if e.err != nil && ctx.Err() != nil {
		// Abandoned by its builder: those waiting compile it again, in
		// a new entry.
		e.abandoned = true
		h.mu.Lock()
		if h.compiled[key] == e {
			delete(h.compiled, key)
		}
		h.mu.Unlock()
	}
	close(e.ready)
	if e.err != nil {
		h.release(e)
		return nil, e.err, false
	}
	return e, nil, false
}

// rewriteOptions are the rewrites every module gets (see package rewrite).
func (h *Host) rewriteOptions(tables int64) rewrite.Options {
	return rewrite.Options{Interrupt: h.opts.deadlines == deadlineInterrupt, MergeData: true, Tables: uint32(tables), Defect: h.opts.defect}
}

// compileCached compiles b, through the compilation cache, within the
// host's compile timeout. wazero checks the context between functions
// when it compiles with workers, and each function's cost is bounded by
// ModuleLimits. An unreadable cache entry (a torn write, a disk error) is
// not fatal: it is only a cache, so it is dropped and the module compiled
// again.
func (h *Host) compileCached(ctx context.Context, g *runtimeGen, b []byte) (mod wazero.CompiledModule, err error) {
	// wazero's validator panics on some malformed modules (see
	// TestWazeroPanicsOnMalformed); validation refuses them first, and a
	// panic left is a refusal too, not the end of the process.
	defer func() {
		if p := recover(); p != nil {
			mod, err = nil, fmt.Errorf("%w: the runtime failed on it: %v", ErrMalformed, p)
		}
	}()
	ctx, cancel := compileBudget(ctx, h.compileTimeout, compileWallCap*h.compileTimeout, selfCPU)
	defer cancel()
	// Close ends the compilation too (see Host.Close).
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	if !h.compiling(&stop, true) {
		return nil, ErrClosed
	}
	defer h.compiling(&stop, false)
	ctx = experimental.WithCompilationWorkers(ctx, compileWorkers)
	mod, err = g.rt.CompileModule(ctx, b)
	if err != nil && strings.Contains(err.Error(), "compilationcache:") {
		h.purgeCache()
		mod, err = g.rt.CompileModule(ctx, b)
	}
	if path, ok := h.cacheReadFailed(err); ok {
		// An entry that cannot be opened (a file where wazero's
		// directory was): out of the way, and compile again.
		h.cacheUnwritable(err)
		h.clearUnreadable(path)
		mod, err = g.rt.CompileModule(ctx, b)
	}
	if err != nil && cacheWriteFailed(err) {
		// The cache could not be written (a full disk, a read-only
		// directory): it is only a cache. wazero keeps the module it
		// compiled in memory before it writes the file, holding a
		// reference no CompiledModule owns, so compiling again finds
		// it there; one Close gives that reference back (wazero's
		// Close drops one and leaves mod usable).
		h.cacheUnwritable(err)
		if mod, err = g.rt.CompileModule(ctx, b); err == nil {
			_ = mod.Close(ctx)
		}
	}
	if err != nil && errors.Is(context.Cause(ctx), ErrClosed) {
		return nil, ErrClosed
	}
	if err != nil && errors.Is(context.Cause(ctx), errCompileBudget) {
		return nil, &ModuleLimitError{Limit: "CompileTimeout", Max: int64(h.compileTimeout / time.Second),
			What: fmt.Sprintf("compiling it took longer than %v, of wall time and of CPU time (Options.CompileTimeout)", h.compileTimeout)}
	}
	return mod, err
}

// cacheWriteFailed reports whether err is wazero's failure to write a
// compilation cache entry: a temporary file it could not create, write,
// sync or close, or its rename into place. Compilation itself never
// fails with an os error, and a failed read of an entry opens the
// entry's own name, never a ".tmp" one.
func cacheWriteFailed(err error) bool {
	var le *os.LinkError
	if errors.As(err, &le) {
		return true
	}
	var pe *os.PathError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Op {
	case "write", "sync", "close":
		return true
	case "open":
		return strings.HasSuffix(pe.Path, ".tmp")
	}
	return false
}

// cacheReadFailed reports whether err is wazero's failure to open an
// entry of the host's compilation cache (other than its absence), and
// the entry's path.
func (h *Host) cacheReadFailed(err error) (string, bool) {
	var pe *os.PathError
	if err == nil || h.cacheDir == "" || !errors.As(err, &pe) || pe.Op != "open" || strings.HasSuffix(pe.Path, ".tmp") {
		return "", false
	}
	rel, rerr := filepath.Rel(h.cacheDir, pe.Path)
	return pe.Path, rerr == nil && filepath.IsLocal(rel)
}

// clearUnreadable removes what stops the cache entry at path from
// being opened: the entry itself, or a file standing where one of the
// cache's directories should be. The directory is the host's own.
func (h *Host) clearUnreadable(path string) {
	for p := path; p != h.cacheDir && strings.HasPrefix(p, h.cacheDir); p = filepath.Dir(p) {
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
			_ = os.Remove(p)
			return
		}
	}
}

// cacheUnwritable logs, once per host, that compiled code is not being
// cached on disk.
func (h *Host) cacheUnwritable(err error) {
	h.cacheWarn.Do(func() {
		if lg := h.opts.Logger; lg != nil {
			lg.Warn("host: the compilation cache cannot be written; modules compile without it (every new process compiles them again): free space or fix the directory's permissions, or set Options.NoDiskCache",
				"dir", h.cacheDir, "error", err.Error())
		}
	})
}

// compiling registers (add) or forgets a compilation in progress, which
// Close stops through stop; it reports false once the host is closed.
func (h *Host) compiling(stop *context.CancelCauseFunc, add bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !add {
		delete(h.compiles, stop)
		return true
	}
	if h.closed {
		return false
	}
	h.compiles[stop] = true
	return true
}

// compileWorkers is how many goroutines compile a module's functions.
// With more than one, wazero checks the context between functions, which
// makes the compile timeout, and Close, effective.
const compileWorkers = 2

// moduleError turns what wasmbin refused into the host's errors.
func moduleError(err error) error {
	var le *wasmbin.LimitError
	if errors.As(err, &le) {
		name := le.Limit
		if name == "ModuleBytes" {
			name = "Bytes"
		}
		return &ModuleLimitError{Limit: name, Max: le.Max, What: le.What}
	}
	return fmt.Errorf("%w: %v", ErrMalformed, err)
}

// compilePrepared reads what the host needs of the prepared module and
// compiles it.
func (e *compiledEntry) compilePrepared(ctx context.Context, h *Host, prepared []byte) (wazero.CompiledModule, error) {
	minPages, other, err := rewrite.Scan(prepared)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	e.minMem, e.otherImport = int64(minPages)<<16, other
	if e.snapGlobals, e.snapSafe, e.resetSafe, err = rewrite.SnapshotInfo(prepared); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	mod, err := h.compileCached(ctx, e.gen, prepared)
	if err != nil {
		var mle *ModuleLimitError
		switch {
		case errors.As(err, &mle), errors.Is(err, ErrClosed):
			return nil, err
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return mod, nil
}

// prepare validates b, rewrites it and verifies the rewrite. Only the
// kernel may import from goModule.
func (h *Host) prepare(b []byte, opts rewrite.Options, kernel bool) ([]byte, error) {
	m, err := wasmbin.Validate(b, h.moduleLimits)
	if err != nil {
		return nil, moduleError(err)
	}
	for _, imp := range m.Imports {
		if imp.Module == goModule && (!kernel || imp.Name == rewrite.YieldImport) {
			// The kernel's own functions; Load names the module.
			return nil, &ImportError{Import: imp.Module + "." + imp.Name}
		}
	}
	if err := checkReexports(m); err != nil && h.opts.defect != defectReexport {
		return nil, err
	}
	prepared, err := rewrite.Apply(m, b, opts)
	if err != nil {
		var le *wasmbin.LimitError
		if errors.As(err, &le) {
			return nil, moduleError(err) // a table past the Tables limit
		}
		return nil, err
	}
	if opts.Interrupt {
		pm, err := wasmbin.Verify(prepared, rewrite.VerifyLimits(h.moduleLimits), rewrite.Instrumentation(m))
		if err != nil {
			return nil, fmt.Errorf("%w: the host's instrumentation of the module failed its own verification, so it is not run (a defect of the host; please report it): %v", ErrUnsafe, err)
		}
		// Every instance initialises these, uninterrupted.
		if n, most := pm.Data+len(pm.Elements), h.moduleLimits.Segments; n > most {
			return nil, &ModuleLimitError{Limit: "Segments", Max: int64(most),
				What: fmt.Sprintf("every instance would initialise %d data and element segments (%d data, %d element; the host merges only adjacent active data segments at constant offsets)", n, pm.Data, len(pm.Elements))}
		}
	}
	return prepared, nil
}

func (e *compiledEntry) build(ctx context.Context, h *Host, b []byte, tables int64) error {
	e.size = len(b)
	opts := h.rewriteOptions(tables)
	// The module limits are part of the key: a module prepared under
	// looser ones must be validated again under these.
	limits := sha256.Sum256(fmt.Appendf(nil, "%+v", h.moduleLimits))
	key := fmt.Sprintf("%s-%s-%x-%v-%v-%d%s", e.sha, rewriteVersion, limits[:8], opts.Interrupt, opts.MergeData, opts.Tables, opts.Defect)
	var mod wazero.CompiledModule
	// A prepared module in the cache was validated, rewritten and
	// verified by this version of the host: the directory is trusted as
	// wazero's compiled code beside it is. One that does not compile (a
	// torn write, a disk error) is prepared again.
	var prepared []byte
	if len(b) >= artifactMinSize {
		if prepared = h.artifacts.get("prepared", key); prepared != nil {
			if m, err := e.compilePrepared(ctx, h, prepared); err == nil {
				mod = m
			} else if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	if mod == nil {
		var err error
		if prepared, err = h.prepare(b, opts, false); err != nil {
			return err
		}
		if mod, err = e.compilePrepared(ctx, h, prepared); err != nil {
			return err
		}
		if len(b) >= artifactMinSize {
			h.artifacts.put("prepared", key, prepared)
		}
	}
	h.noteTypes(e.gen, prepared)
	e.mod = mod
	exports := mod.ExportedFunctions()
	e.inits = findInits(exports)
	e.sharedSeeds = exports[sharedSeedsExport] != nil
	switch {
	case exports["call"] != nil:
		e.abi = ABIExtism
	case exports["call_tool"] != nil:
		// hyper-mcp's v2 interface: list_tools and call_tool, with
		// MCP's request shapes (host/ABI.md 1.9).
		e.abi, e.v2 = ABIExtism, true
	case exports["_start"] != nil:
		e.abi = ABIWASICommand
	case importsFrom(mod, envModule):
		// An Extism plugin that is not a tool module: its functions
		// become tools through a sidecar naming them (export).
		e.abi = ABIExtism
	default:
		_ = mod.Close(ctx)
		e.mod = nil
		return ErrNoABI
	}
	e.kernel = e.abi == ABIExtism
	for _, f := range mod.ImportedFunctions() {
		m, n, _ := f.Import()
		if m == goModule && n == rewrite.YieldImport {
			continue // added by the rewrite
		}
		e.imports = append(e.imports, m+"."+n)
		if m == envModule || m == userModule {
			e.kernel = true
		}
		if statefulImports[m+"."+n] {
			e.stateful = true
		}
	}
	return nil
}

// importsFrom reports whether mod imports a function of module.
func importsFrom(mod wazero.CompiledModule, module string) bool {
	for _, f := range mod.ImportedFunctions() {
		if m, _, _ := f.Import(); m == module {
			return true
		}
	}
	return false
}

// release drops one reference; the last one frees the compiled code.
func (h *Host) release(e *compiledEntry) {
	h.mu.Lock()
	e.refs--
	last := e.refs == 0
	if last && h.compiled[e.key] == e {
		delete(h.compiled, e.key)
	}
	h.mu.Unlock()
	if last && e.mod != nil {
		_ = e.mod.Close(context.Background())
	}
	if last && e.gen != nil {
		h.leaveGen(e.gen)
	}
}

// checkImports verifies every import of the module against what the host
// provides, before anything is instantiated. It does not check grants: a
// module loads with imports it was not granted, and each call of one is
// refused (hostmod's gate, host/ABI.md; RATIONALE.md "Why does a module
// load with imports it was not granted?"). With inspecting set it lets
// through the functions an application registers that this host lacks
// (describe then meets stand-ins, see stubFunctions): a module is reviewed
// where it is approved, often not in the program that will run it.
func (h *Host) checkImports(name string, e *compiledEntry, inspecting bool) error {
	if err := checkCompiledReexports(name, e.mod); err != nil && h.opts.defect != defectReexport {
		return err
	}
	if mems := e.mod.ImportedMemories(); len(mems) > 0 {
		m, n, _ := mems[0].Import()
		return &ImportError{Module: name, Import: m + "." + n}
	}
	if e.otherImport != "" {
		return &ImportError{Module: name, Import: e.otherImport}
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
			ok = n == rewrite.YieldImport && string(f.ParamTypes()) == string([]api.ValueType{api.ValueTypeI32}) && len(f.ResultTypes()) == 0
			if ok {
				continue
			}
		case envModule:
			def, ok = h.kernel.funcs[n]
		case wasiModule:
			def, ok = e.gen.definition(m, n)
		default:
			if !embedderImport(m, n) {
				def, ok = e.gen.definition(m, n)
				break
			}
			if h.functions.lookup(m, n) == nil {
				if inspecting {
					continue
				}
				imp.Detail = ""
				imp.Unregistered = true
				return imp
			}
			def, ok = e.gen.definition(m, n)
		}
		if !ok {
			return imp
		}
		if !sameSignature(def, f) {
			imp.Detail = fmt.Sprintf("want %s, module has %s", signature(def), signature(f))
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
