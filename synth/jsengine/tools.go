package main

import (
	"encoding/json"
	"fmt"

	"github.com/dop251/goja"
)

// installTools defines tools.call(name, args). With a bridge it calls the
// host tool and returns its structured content, or its text when it has
// none, throwing when the tool reports an error; without one it throws.
func installTools(vm *goja.Runtime, parse, stringify goja.Callable, call bridge) error {
	tools := vm.NewObject()
	err := tools.Set("call", func(fc goja.FunctionCall) goja.Value {
		name := fc.Argument(0).String()
		if call == nil {
			panic(vm.NewGoError(fmt.Errorf("tools.call(%q): this engine was built without the host-tool bridge (build it with -tags toolbridge and grant tools:%s)", name, name)))
		}
		args := "{}"
		if a := fc.Argument(1); !goja.IsUndefined(a) {
			s, err := stringify(goja.Undefined(), a)
			if err != nil {
				panic(err)
			}
			args = s.String()
		}
		raw, err := call(name, []byte(args))
		if err != nil {
			panic(vm.NewGoError(fmt.Errorf("tools.call(%q): %v", name, err)))
		}
		var res struct {
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			panic(vm.NewGoError(fmt.Errorf("tools.call(%q): the host returned an invalid result: %v", name, err)))
		}
		text := ""
		for _, c := range res.Content {
			if c.Type == "text" {
				text += c.Text
			}
		}
		if res.IsError {
			panic(vm.NewGoError(fmt.Errorf("tools.call(%q): %s", name, text)))
		}
		if len(res.StructuredContent) > 0 && string(res.StructuredContent) != "null" {
			v, err := parse(goja.Undefined(), vm.ToValue(string(res.StructuredContent)))
			if err != nil {
				panic(err)
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
