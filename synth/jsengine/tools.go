package main

import (
	"fmt"

	"github.com/dop251/goja"
)

// installTools defines tools.call(name, args). With a bridge it calls the
// host tool and returns its structured content, or its text when it has
// none, throwing when the tool reports an error; without one it throws.
func installTools(vm *goja.Runtime, stringify goja.Callable, call bridge) error {
	tools := vm.NewObject()
	err := tools.Set("call", func(fc goja.FunctionCall) goja.Value {
		name := fc.Argument(0).String()
		if call == nil {
			panic(vm.NewGoError(fmt.Errorf("tools.call(%q): this engine was built without the host-tool bridge (build it with -tags toolbridge and grant tools:%s)", name, name)))
		}
		args := emptyArgs
		if a := fc.Argument(1); !goja.IsUndefined(a) {
			s, err := stringify(goja.Undefined(), a)
			if err != nil {
				panic(err)
			}
			if goja.IsUndefined(s) {
				panic(vm.NewTypeError("tools.call(%q, args): the arguments must be an object, like {id: 7}", name))
			}
			args = []byte(s.String())
		}
		raw, err := call(name, args)
		if err != nil {
			panic(vm.NewGoError(fmt.Errorf("tools.call(%q): %v", name, err)))
		}
		res, err := scanResult(raw)
		if err != nil {
			panic(vm.NewGoError(fmt.Errorf("tools.call(%q): the host returned an invalid result: %v", name, err)))
		}
		text, err := contentText(res.content)
		if err != nil {
			panic(vm.NewGoError(fmt.Errorf("tools.call(%q): the host returned an invalid result: %v", name, err)))
		}
		if res.isError {
			panic(vm.NewGoError(fmt.Errorf("tools.call(%q): %s", name, text)))
		}
		if len(res.structured) > 0 && string(res.structured) != "null" {
			v, err := decodeJSON(vm, res.structured)
			if err != nil {
				panic(vm.NewGoError(fmt.Errorf("tools.call(%q): the host returned an invalid result: %v", name, err)))
			}
			return v
		}
		return vm.ToValue(text)
	})
	if err != nil {
		return err
	}
	return vm.Set("tools", tools)
}
