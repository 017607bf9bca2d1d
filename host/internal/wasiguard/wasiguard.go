// Package wasiguard makes the WASI functions a guest calls behave as the
// host's own functions do.
//
// wazero's WASI functions are its own Go code, which the host cannot wrap
// directly; a function listener on the WASI host module sees every call
// before it runs. The guard uses that: each call checks the caller's
// deadline first (a guest calling random_get or fd_write in a loop stops
// at its time limit like one calling the kernel), is marked as time in a
// host function for the watchdog, and the calls that take a list of any
// length (fd_write, fd_read, fd_pwrite, fd_pread: one system call per
// iovec, with no deadline inside; poll_oneoff) are refused past MaxList
// entries, as POSIX refuses more than IOV_MAX iovecs. A call of any
// function outside keepsState tells the call (ChangedState): it may have
// changed the instance's WASI state, which the host cannot set back.
package wasiguard

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
)

// Module is the name of WASI's host module.
const Module = wasi_snapshot_preview1.ModuleName

// MaxList bounds the iovecs of one read or write, and the subscriptions
// of one poll_oneoff.
const MaxList = 1024

// Call is the guest call in progress, as the guard sees it: the subset of
// hostcall.Call it needs, and the watchdog's mark.
type Call interface {
	// CheckStop ends the call when it must stop.
	CheckStop()
	// Crash ends the call as a crash.
	Crash(reason string)
	// InHost marks the guest as in a host function (true) or back in its
	// own code (false), for the watchdog.
	InHost(in bool)
	// ChangedState records that the guest called a WASI function that may
	// change its instance's WASI state (its file table, a file's offset
	// or flags): the host must not reset the instance to a snapshot,
	// which does not hold that state.
	ChangedState()
}

// Find returns the call a WASI function runs for, from the function's
// context; false outside a tool call (the host's own instantiations),
// which the guard lets through.
type Find func(ctx context.Context) (Call, bool)

// listArg is the parameter that counts a WASI function's list, by name.
var listArg = map[string]int{
	"fd_write": 2, "fd_read": 2, "fd_pwrite": 2, "fd_pread": 2, "poll_oneoff": 2,
}

// keepsState are the WASI functions that change nothing of an instance's
// WASI state outside the call's own output: reading the arguments, the
// environment, the clocks and randomness, writing to the output, reading
// the input, and stat calls. A function not listed (path_open, fd_close,
// fd_renumber, fd_seek, fd_readdir, fd_fdstat_set_flags, proc_exit, any
// the runtime adds) marks the call's instance as not to be reset: the
// list is what is known to be safe, not what is known to be unsafe.
var keepsState = map[string]bool{
	"args_get": true, "args_sizes_get": true, "environ_get": true, "environ_sizes_get": true,
	"clock_res_get": true, "clock_time_get": true, "random_get": true, "sched_yield": true,
	"poll_oneoff": true, "fd_write": true, "fd_read": true,
	"fd_fdstat_get": true, "fd_prestat_get": true, "fd_prestat_dir_name": true, "fd_filestat_get": true,
}

// Instantiate instantiates WASI's host module on rt with the guard on
// every function, and returns it.
func Instantiate(rt wazero.Runtime, find Find) (api.Module, error) {
	ctx := experimental.WithFunctionListenerFactory(context.Background(), factory{find})
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		return nil, fmt.Errorf("host: instantiating WASI: %w", err)
	}
	return rt.Module(Module), nil
}

type factory struct{ find Find }

func (f factory) NewFunctionListener(def api.FunctionDefinition) experimental.FunctionListener {
	return NewListener(def.Name(), f.find)
}

// NewListener returns the guard of the WASI function name.
func NewListener(name string, find Find) experimental.FunctionListener {
	arg, ok := listArg[name]
	if !ok {
		arg = -1
	}
	return &listener{name: name, list: arg, find: find, keeps: keepsState[name]}
}

type listener struct {
	name  string
	list  int // the parameter holding the list's length, -1 for none
	find  Find
	keeps bool // keepsState
}

func (l *listener) Before(ctx context.Context, _ api.Module, _ api.FunctionDefinition, params []uint64, _ experimental.StackIterator) {
	c, ok := l.find(ctx)
	if !ok {
		return
	}
	if !l.keeps {
		c.ChangedState()
	}
	c.CheckStop()
	if l.list >= 0 && l.list < len(params) && uint32(params[l.list]) > MaxList {
		c.Crash(fmt.Sprintf("%s: a list of %d entries, more than the %d allowed", l.name, uint32(params[l.list]), MaxList))
	}
	c.InHost(true)
}

func (l *listener) After(ctx context.Context, _ api.Module, _ api.FunctionDefinition, _ []uint64) {
	if c, ok := l.find(ctx); ok {
		c.InHost(false)
	}
}

func (l *listener) Abort(ctx context.Context, _ api.Module, _ api.FunctionDefinition, _ error) {
	if c, ok := l.find(ctx); ok {
		c.InHost(false)
	}
}
