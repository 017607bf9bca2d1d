package main

import (
	"github.com/dop251/goja"
)

// prepared is a runtime made, and its built-ins the runner uses brought
// to life, while the instance starts: package initialisation runs when
// the host makes the instance, which its pool does ahead of the call, so
// the call does not pay for it. Each instance serves one call (the host
// gives every call a fresh one), and newRuntime hands the prepared runtime
// out once: a second call in the same instance gets a new one, so nothing
// a script left in a runtime reaches another.
var prepared = prepareRuntime()

// warmUp brings to life what every script and program uses: JSON,
// promises and async functions, errors with stacks.
const warmUp = `(async () => { await Promise.resolve(JSON.stringify(JSON.parse("{}"))); return new Error("x").stack })()`

func prepareRuntime() *goja.Runtime {
	vm := goja.New()
	vm.SetMaxCallStackSize(maxCallStack)
	if _, err := vm.RunString(warmUp); err != nil {
		return nil
	}
	return vm
}

// newRuntime returns the prepared runtime the first time, a new one after,
// with a Math.random of its own that is seeded during the call
// (freshRandom): the prepared runtime was made before the host's snapshot
// of the instance, and every instance restored from it starts with it.
func newRuntime() *goja.Runtime {
	vm := prepared
	prepared = nil
	if vm == nil {
		vm = goja.New()
		vm.SetMaxCallStackSize(maxCallStack)
	}
	vm.SetRandSource(freshRandom())
	return vm
}
