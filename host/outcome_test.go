package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCallOutcomes checks how calls that end without a sandbox failure are
// reported: the tool's own failures (an error result, a failure code, a
// non-zero exit status), arguments the schema refuses, output that is not
// a valid result. Each is an error Result with a nil Go error, and the
// module serves its next call the same way.
func TestCallOutcomes(t *testing.T) {
	t.Parallel()
	// echo with an outputSchema its echo cannot meet for {"z":1}.
	strictEcho := []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object"},
		"outputSchema":{"type":"object","properties":{"y":{"type":"integer"}},"required":["y"]}}]}`)
	// A WASI command whose only tool is named like the Extism export.
	describeCmd := []byte(`{"tools":[{"name":"describe","inputSchema":{"type":"object"}}]}`)
	cases := []struct {
		name    string
		file    string
		sidecar []byte
		tool    string
		args    string
		want    string // the text the model reads
		outcome Outcome
	}{
		{"Extism error result", "echo.wasm", nil, "fail", `{}`,
			"the city was not found", OutcomeToolError},
		{"Extism failure code with error_set", "echo.wasm", nil, "failcode", `{}`,
			"failcode: something went wrong", OutcomeToolError},
		// As extism/go-sdk has it: proc_exit(n) in a call returns n, and
		// an error set with a return of 0 fails the call.
		{"Extism exit status with error_set", "state.wasm", nil, "exit3", `{}`,
			"exit3: gave up", OutcomeToolError},
		{"Extism error_set with a return of 0", "state.wasm", nil, "errzero", `{}`,
			"errzero: failed but returned 0", OutcomeToolError},
		{"WASI exit status with stderr", "wasicmd.wasm", nil, "exitcode", `{}`,
			"tool exitcode exited with status 3: something broke", OutcomeToolError},
		// The call reaches the command on stdin, like any other tool; the
		// guest answers that it knows no such tool.
		{"WASI tool named describe", "wasicmd.wasm", describeCmd, "describe", `{}`,
			"unknown tool", OutcomeToolError},
		{"arguments against the schema", "echo.wasm", nil, "spin", `{"n":"many"}`,
			"invalid arguments: n: ", OutcomeInvalidArgs},
		{"arguments that are not JSON", "echo.wasm", nil, "echo", `{"a":`,
			"invalid arguments: arguments are not valid JSON: ", OutcomeInvalidArgs},
		{"result against the outputSchema", "echo.wasm", strictEcho, "echo", `{"z":1}`,
			"tool echo returned an invalid result: structuredContent does not match the outputSchema: ", OutcomeBadOutput},
	}
	h, rec := newTestHost(t, Options{})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := load(t, h, c.file, Module{Sidecar: c.sidecar})
			res := call(t, l, c.tool, c.args)
			if !res.IsError || !strings.HasPrefix(res.Text(), c.want) {
				t.Fatalf("result = %+v, want an error starting %q", res, c.want)
			}
			if r := rec.last(t); r.Outcome != c.outcome || r.Error != res.Text() {
				t.Errorf("record = %+v, want outcome %s", r, c.outcome)
			}
			// The module serves its next call the same way.
			if res := call(t, l, c.tool, c.args); !strings.HasPrefix(res.Text(), c.want) {
				t.Errorf("the next call = %+v", res)
			}
		})
	}
}

// TestCallCancelled: a call whose context has ended is not attempted as a
// tool failure: Call returns the context's error and the record says
// cancelled.
func TestCallCancelled(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{})
	l := load(t, h, "loop.wasm", Module{})
	tl, _ := l.Tool("loop")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := tl.Call(ctx, toolCall("loop", `{}`))
	if !errors.Is(err, context.Canceled) || !res.IsError {
		t.Fatalf("Call = %+v, %v; want an error result and context.Canceled", res, err)
	}
	if r := rec.last(t); r.Outcome != OutcomeCancelled {
		t.Errorf("outcome = %s, want %s", r.Outcome, OutcomeCancelled)
	}
	mustEcho(t, h)
}

// A call that answers and then exits with status 0 succeeds, as under
// extism/go-sdk, and the module (reused or fresh) serves the next call in
// an instance of its own.
func TestExitZeroAfterOutputIsSuccess(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{})
	for _, reuse := range []bool{false, true} {
		l := load(t, h, "state.wasm", Module{Reuse: reuse})
		for range 2 {
			res := call(t, l, "exit0", `{}`)
			if res.IsError || res.Text() != "answered before exiting" {
				t.Fatalf("reuse %v: %+v", reuse, res)
			}
			if r := rec.last(t); r.Outcome != OutcomeOK {
				t.Errorf("reuse %v: outcome %s", reuse, r.Outcome)
			}
		}
		// The exited instance is not used again: the count starts over.
		if res := call(t, l, "count", `{}`); res.IsError || res.Text() != "1" {
			t.Errorf("reuse %v: the call after exit0: %+v", reuse, res)
		}
	}
}

// TestCallCancelledWhileRunning: a caller that gives up while the guest
// spins ends the call then, not at the time limit, with the context's
// error; the instance is not used again, fresh or reused, and the module
// serves its next call.
func TestCallCancelledWhileRunning(t *testing.T) {
	t.Parallel()
	h, rec := newTestHost(t, Options{})
	for _, reuse := range []bool{false, true} {
		l := load(t, h, "loop.wasm", Module{Reuse: reuse, Limits: Limits{Timeout: time.Minute}})
		tl, _ := l.Tool("loop")
		for range 2 {
			ctx, cancel := context.WithCancel(context.Background())
			timer := time.AfterFunc(50*time.Millisecond, cancel)
			done := make(chan error, 1)
			go func() {
				_, err := tl.Call(ctx, toolCall("loop", `{}`))
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("reuse %v: Call = %v, want context.Canceled", reuse, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("reuse %v: a cancelled call still runs 30 s later (its limit is a minute)", reuse)
			}
			timer.Stop()
			cancel()
			if r := rec.last(t); r.Outcome != OutcomeCancelled {
				t.Errorf("reuse %v: outcome = %s, want %s", reuse, r.Outcome, OutcomeCancelled)
			}
		}
	}
	mustEcho(t, h)
}
