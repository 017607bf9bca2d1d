package host

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// wazero's WASI functions are its own Go code, which the host cannot wrap
// directly; a function listener on the WASI host module sees every call
// before it runs. wasiGuard uses that to make WASI calls behave as the
// host's own functions do: each checks the caller's deadline first (a
// guest calling random_get or fd_write in a loop stops at its time limit
// like one calling the kernel), is marked as time in a host function for
// the watchdog, and the calls that take a list of any length (fd_write,
// fd_read, fd_pwrite, fd_pread: one system call per iovec, with no
// deadline inside; poll_oneoff) are refused past maxWASIList entries, as
// POSIX refuses more than IOV_MAX iovecs.

// maxWASIList bounds the iovecs of one read or write, and the
// subscriptions of one poll_oneoff.
const maxWASIList = 1024

type wasiGuard struct{}

// listArg is the parameter that counts a WASI function's list, by name.
var listArg = map[string]int{
	"fd_write": 2, "fd_read": 2, "fd_pwrite": 2, "fd_pread": 2, "poll_oneoff": 2,
}

func (wasiGuard) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	arg, ok := listArg[def.Name()]
	if !ok {
		arg = -1
	}
	return &wasiListener{name: def.Name(), list: arg}
}

type wasiListener struct {
	name string
	list int // the parameter holding the list's length, -1 for none
}

func (l *wasiListener) Before(ctx context.Context, _ api.Module, _ api.FunctionDefinition, params []uint64, _ experimental.StackIterator) {
	inst, ok := ctx.Value(instanceKey{}).(*instance)
	if !ok {
		return
	}
	inst.checkStop()
	if l.list >= 0 && l.list < len(params) && uint32(params[l.list]) > maxWASIList {
		inst.fail(&TrapError{Reason: fmt.Sprintf("%s: a list of %d entries, more than the %d allowed", l.name, uint32(params[l.list]), maxWASIList)})
	}
	inst.inHost.Store(true)
}

func (l *wasiListener) After(ctx context.Context, _ api.Module, _ api.FunctionDefinition, _ []uint64) {
	if inst, ok := ctx.Value(instanceKey{}).(*instance); ok {
		inst.inHost.Store(false)
	}
}

func (l *wasiListener) Abort(ctx context.Context, _ api.Module, _ api.FunctionDefinition, _ error) {
	if inst, ok := ctx.Value(instanceKey{}).(*instance); ok {
		inst.inHost.Store(false)
	}
}

// wasiContext is the context the WASI host module is compiled with.
func wasiContext(ctx context.Context) context.Context {
	return experimental.WithFunctionListenerFactory(ctx, wasiGuard{})
}
