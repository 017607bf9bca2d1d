package main

import (
	"strings"

	"github.com/dop251/goja"
)

// maxConsole is how much console output is kept: the end of it is what
// explains a failure.
const maxConsole = 16 << 10

// console collects what a script writes with console.log and friends. It
// never reaches the call's output, so a script printing something shaped
// like a reply cannot forge one.
type console struct {
	buf     strings.Builder
	dropped bool
}

func newConsole() *console { return &console{} }

func (c *console) install(vm *goja.Runtime, stringify goja.Callable) error {
	obj := vm.NewObject()
	write := func(call goja.FunctionCall) goja.Value {
		parts := make([]string, len(call.Arguments))
		for i, a := range call.Arguments {
			parts[i] = show(a, stringify)
		}
		c.write(strings.Join(parts, " ") + "\n")
		return goja.Undefined()
	}
	for _, name := range []string{"log", "info", "warn", "error", "debug"} {
		if err := obj.Set(name, write); err != nil {
			return err
		}
	}
	return vm.Set("console", obj)
}

// show formats one console argument: strings as they are, other values as
// JSON when they have one.
func show(v goja.Value, stringify goja.Callable) string {
	if s, ok := v.Export().(string); ok {
		return s
	}
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return v.String()
	}
	if js, err := stringify(goja.Undefined(), v); err == nil && !goja.IsUndefined(js) {
		return js.String()
	}
	return v.String()
}

func (c *console) write(s string) {
	c.buf.WriteString(s)
	if c.buf.Len() > 2*maxConsole {
		keep := c.buf.String()[c.buf.Len()-maxConsole:]
		c.buf.Reset()
		c.buf.WriteString(keep)
		c.dropped = true
	}
}

// tail returns the last maxConsole bytes written.
func (c *console) tail() string {
	s := c.buf.String()
	if len(s) > maxConsole {
		s, c.dropped = s[len(s)-maxConsole:], true
	}
	s = strings.TrimRight(s, "\n")
	if c.dropped && s != "" {
		s = "…" + s
	}
	return s
}
