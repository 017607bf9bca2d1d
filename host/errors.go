package host

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrMalformed is wrapped by the error Load and Inspect return for bytes
	// that are not a valid WebAssembly module.
	ErrMalformed = errors.New("host: not a valid WebAssembly module")
	// ErrNoABI is wrapped when a module exports neither `call` (the Extism
	// plugin ABI) nor `_start` (the WASI command ABI).
	ErrNoABI = errors.New("host: module exports neither call (Extism plugin) nor _start (WASI command)")
	// ErrDescribe is wrapped when a module's describe document is missing,
	// fails or is invalid.
	ErrDescribe = errors.New("host: invalid describe document")
	// ErrUnsafe is wrapped when the host cannot prove that its own
	// instrumentation of a module is complete (a defect of the host): the
	// module is refused rather than run without a way to stop it.
	ErrUnsafe = errors.New("host: the module cannot be run safely")
	// ErrClosed is returned by calls on a closed Host or Loaded module.
	ErrClosed = errors.New("host: closed")
	// ErrNoJournal is wrapped when a module has an fs.workspace grant and
	// the host no Options.Journal to record its changes in.
	ErrNoJournal = errors.New("host: an fs.workspace grant needs a journal")
)

// ImportError reports a module that imports a function it may not use:
// one this host does not provide, or with another signature, or that the
// module exposes as its own. Load fails with it before anything runs. An
// import that needs a grant the module was not given is no ImportError:
// the module loads, and each call of the import is refused (a
// *DeniedError; host/ABI.md).
type ImportError struct {
	Module string // the module's name
	Import string // "extism:host/env.http_request"
	// Detail explains a signature mismatch, when that is the problem.
	Detail string
	// Unregistered is set for an import an application would register
	// (a namespace or name that is not the host's own) which this host's
	// Options.Functions lack.
	Unregistered bool
	// Exposed says how the module hands the import to the host as its
	// own function (`the export "call"`, `its start function`), which no
	// module may: the host would run the host function in place of the
	// module's code.
	Exposed string
}

func (e *ImportError) Error() string {
	switch {
	case e.Exposed != "":
		return fmt.Sprintf("host: module %q makes its import %s %s: a module may not export a function it imports, nor start with one (the host would run the host function in place of the module's code); export a function of the module's own that calls it", e.Module, e.Import, e.Exposed)
	case e.Detail != "":
		return fmt.Sprintf("host: module %q imports %s with the wrong signature: %s", e.Module, e.Import, e.Detail)
	case e.Unregistered:
		return fmt.Sprintf("host: module %q imports the host function %s, which this host does not provide (the application registers its host functions in host.Options.Functions)", e.Module, e.Import)
	}
	return fmt.Sprintf("host: module %q imports %s, which this host does not provide (a tool may import wasi_snapshot_preview1 and the functions of host/ABI.md)", e.Module, e.Import)
}

// DeniedError reports an action a module tried without the grant that
// allows it (a request to an un-granted host, a private address, a kv
// namespace it was not given). The call that tried it ends with this error
// as its result.
type DeniedError struct {
	Kind   string // the grant kind involved: "net", "kv", "tools"
	Action string // what was tried, e.g. "request to http://127.0.0.1:8080/"
	Reason string // why it was refused and what would allow it
}

func (e *DeniedError) Error() string {
	return fmt.Sprintf("%s: %s refused: %s", e.Kind, e.Action, e.Reason)
}

// TrapError reports a module that crashed: an `unreachable`, an
// out-of-bounds access, a stack overflow, a bad call into the host.
type TrapError struct {
	Reason string // the first line of the runtime's message
}

func (e *TrapError) Error() string { return "tool crashed: " + e.Reason }
