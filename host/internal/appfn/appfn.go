// Package appfn serves the embedding application's host functions
// (host.Function, granted as host:NAMESPACE.NAME) to guests: the checks
// before one runs (describe, the grant), its failures ending the call,
// and the stand-ins that refuse a function the host lacks under
// Inspect's describe.
package appfn

import (
	"fmt"

	"github.com/tetratelabs/wazero/api"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
)

// Call is the guest call as an application's function sees it.
type Call interface {
	hostcall.Call
	// Granted reports whether the module has grant (as its string).
	Granted(grant string) bool
	// Failure is the failure the host recorded for the call (a Write past
	// the memory limit that the function's Caller reported as an error),
	// nil for none.
	Failure() error
	// FunctionFailed ends the call with the failure err of the function
	// NAMESPACE.NAME (a host.FunctionError).
	FunctionFailed(function string, err error)
}

// Func is one of the application's functions.
type Func[C Call] struct {
	// Name is NAMESPACE.NAME, Grant "host:" and Name.
	Name, Grant string
	// Run calls the application's function. A panic is its failure.
	Run func(c C, stack []uint64) error
}

// Entry is f as the import name of its namespace, for hostmod.Add: refused
// while describing or without the grant, under the call's deadline, with
// its failures ending the call.
func Entry[C Call](f Func[C], name string, params, results []api.ValueType) hostcall.Func[C] {
	return hostcall.Func[C]{Name: name, Params: params, Results: results, Grant: f.Grant, Fn: func(c C, stack []uint64) { serve(c, f, stack) }}
}

func serve[C Call](c C, f Func[C], stack []uint64) {
	if c.Describing() {
		c.Deny("host", "call of host function "+f.Name, hostcall.NoCapabilities)
	}
	if !c.Granted(f.Grant) {
		// hostmod's gate refuses such a call before it gets here; this is
		// the second lock on the same door.
		c.Deny("host", "call of host function "+f.Name, "the module has no "+f.Grant+" grant")
	}
	c.Use(f.Grant)
	err := run(c, f, stack)
	if failure := c.Failure(); failure != nil {
		panic(failure) // a failure the host recorded (a Write past the memory limit)
	}
	if err != nil {
		if c.Context().Err() != nil {
			c.TimeUp()
		}
		c.FunctionFailed(f.Name, err)
	}
}

// run calls f.Run, turning a panic into an error.
func run[C Call](c C, f Func[C], stack []uint64) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if failure := c.Failure(); failure != nil {
				err = failure
				return
			}
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f.Run(c, stack)
}

// Stub stands in, for a describing instance under Inspect, for the
// function NAMESPACE.NAME (function) this host does not provide: it
// refuses the call, as every capability is refused under describe.
func Stub[C Call](function, name string, params, results []api.ValueType) hostcall.Func[C] {
	return hostcall.Func[C]{Name: name, Params: params, Results: results, Fn: func(c C, _ []uint64) {
		c.Deny("host", "call of host function "+function, hostcall.NoCapabilities)
	}}
}
