package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/tool"
)

// moduleTool is one tool of a loaded module.
type moduleTool struct {
	l       *Loaded
	name    string
	spec    llm.ToolSpec
	in, out *tool.Schema
	flags   tool.Flags
}

var (
	_ tool.Tool    = (*moduleTool)(nil)
	_ tool.Flagger = (*moduleTool)(nil)
)

func toolSpec(td ToolDescription) llm.ToolSpec {
	return llm.ToolSpec{Name: td.Name, Description: td.Description, InputSchema: td.InputSchema, OutputSchema: td.OutputSchema}
}

func (t *moduleTool) Spec() llm.ToolSpec { return t.spec }

// Flags returns the flags derived from the module's grants and the tool's
// annotations (see [Loaded.Tools]).
func (t *moduleTool) Flags() tool.Flags {
	f := t.flags
	f.Permissions = slices.Clone(f.Permissions)
	return f
}

// Call runs the tool in a fresh sandboxed instance. Every failure of the
// tool or the sandbox (bad arguments, a refused action, a limit, a crash,
// invalid output) is an error Result the model sees, with a nil error. The
// error is non-nil only when the call could not be attempted: the module
// is closed, or ctx ended.
func (t *moduleTool) Call(ctx context.Context, c tool.Call) (tool.Result, error) {
	l := t.l
	rec := CallRecord{
		Start: time.Now(), Module: l.name, SHA256: l.sha, ABI: l.abi,
		Tool: t.name, CallID: c.ID, Grants: grantStrings(l.grants),
	}
	res, err := t.call(ctx, c, &rec)
	rec.Duration = time.Since(rec.Start)
	if rec.Outcome != OutcomeOK && res.IsError {
		rec.Error = res.Text()
	}
	if fn := l.h.opts.OnCall; fn != nil {
		fn(rec)
	}
	return res, err
}

func (t *moduleTool) call(ctx context.Context, c tool.Call, rec *CallRecord) (tool.Result, error) {
	l := t.l
	if err := l.enter(); err != nil {
		rec.Outcome = OutcomeFailed
		return tool.Errorf("%v", err), err
	}
	defer l.leave()
	if err := t.in.Validate(c.Arguments); err != nil {
		rec.Outcome = OutcomeInvalidArgs
		return tool.Errorf("%v", err), nil
	}
	args := c.Arguments
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	input, err := json.Marshal(callInput{Params: callParams{Name: t.name, Arguments: args}})
	if err != nil {
		rec.Outcome = OutcomeFailed
		return tool.Errorf("encoding the call: %v", err), nil
	}
	rec.InputBytes = len(input)

	inst, pooled, err := l.acquire(ctx)
	rec.Pooled = pooled
	if err != nil {
		return t.failure(ctx, err, rec)
	}
	out, failure, err := inst.run(ctx, t.name, input)
	rec.MemoryPeak = inst.peak
	rec.Used = inst.usedGrants()
	rec.Denied = inst.denied
	rec.OutputBytes = len(out)
	if err != nil {
		inst.close()
		return t.failure(ctx, err, rec)
	}
	l.releaseInstance(inst, failure == "")
	if failure != "" {
		rec.Outcome = OutcomeToolError
		return tool.Errorf("%s", failure), nil
	}
	res, err := parseResult(out, t.out)
	if err != nil {
		rec.Outcome = OutcomeBadOutput
		return tool.Errorf("tool %s returned an invalid result: %v", t.name, err), nil
	}
	rec.Outcome = OutcomeOK
	if res.IsError {
		rec.Outcome = OutcomeToolError
	}
	return res, nil
}

// failure turns an error that stopped the call into the result the model
// sees and the outcome the trace records.
func (t *moduleTool) failure(ctx context.Context, err error, rec *CallRecord) (tool.Result, error) {
	var (
		limit  *LimitError
		denied *DeniedError
		trap   *TrapError
	)
	switch {
	case errors.As(err, &limit):
		rec.Outcome = OutcomeLimit
	case errors.As(err, &denied):
		rec.Outcome = OutcomeDenied
	case errors.As(err, &trap):
		rec.Outcome = OutcomeTrap
	case ctx.Err() != nil:
		rec.Outcome = OutcomeCancelled
		return tool.Errorf("tool %s: call cancelled: %v", t.name, ctx.Err()), ctx.Err()
	case errors.Is(err, ErrClosed):
		rec.Outcome = OutcomeFailed
		return tool.Errorf("%v", err), err
	default:
		rec.Outcome = OutcomeFailed
	}
	return tool.Errorf("%v", err), nil
}

type callInput struct {
	Params callParams `json:"params"`
}

type callParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// run executes one call on inst: `call` for an Extism plugin (or describe
// when inst.fn is describe), `_start` for a WASI command. It returns the
// output, or failure when the tool reported one (a non-zero return or
// exit status), or err when the host stopped the call.
func (inst *instance) run(parent context.Context, toolName string, input []byte) (out []byte, failure string, err error) {
	ctx, cancel := context.WithTimeout(parent, inst.limits.Timeout)
	defer cancel()
	inst.begin(ctx, toolName)
	inst.stdout.reset()
	inst.stdout.stop = cancel
	inst.stderr.reset()
	cctx := context.WithValue(ctx, instanceKey{}, inst)
	if inst.fn == nil {
		return nil, "", &TrapError{Reason: "the module does not export the function to call"}
	}
	if inst.l.abi == ABIWASICommand && toolName != "describe" {
		return inst.runCommand(ctx, cctx, input)
	}
	inst.k.reset()
	if input != nil {
		inst.k.input = inst.write(input)
		inst.k.inputLen = uint64(len(input))
	}
	res, callErr := inst.callGuarded(cctx)
	if err := inst.classify(ctx, callErr); err != nil {
		return nil, "", err
	}
	var rc uint32
	if len(res) > 0 {
		rc = api.DecodeU32(res[0])
	}
	if rc != 0 {
		msg := fmt.Sprintf("tool %s returned code %d", toolName, rc)
		if b, ok := inst.k.bytes(inst.k.errOff); ok && inst.k.errOff != 0 && len(b) > 0 {
			msg = string(b)
		}
		return nil, msg, nil
	}
	o := inst.k.mem[inst.k.output : inst.k.output+inst.k.outputLen]
	return bytes.Clone(o), "", nil
}

// callGuarded calls inst.fn, converting a panic that escaped the runtime
// (which recovers guest and host-function panics itself) into an error.
func (inst *instance) callGuarded(ctx context.Context) (res []uint64, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("runtime panic: %v", p)
		}
	}()
	return inst.fn.Call(ctx)
}

// runCommand runs a WASI command's _start with the input on stdin.
func (inst *instance) runCommand(ctx, cctx context.Context, input []byte) ([]byte, string, error) {
	inst.stdin.r = bytes.NewReader(input)
	_, callErr := inst.callGuarded(cctx)
	code := uint32(0)
	var exit *sys.ExitError
	if errors.As(callErr, &exit) && exit.ExitCode() != sys.ExitCodeContextCanceled && exit.ExitCode() != sys.ExitCodeDeadlineExceeded {
		code = exit.ExitCode()
		callErr = nil
	}
	if err := inst.classify(ctx, callErr); err != nil {
		return nil, "", err
	}
	out := bytes.Clone(inst.stdout.buf)
	if code == 0 {
		return out, "", nil
	}
	// A command that failed may still have written a result explaining
	// why: use its text, else the end of stderr.
	if r, err := parseResult(out, nil); err == nil && r.Text() != "" {
		return nil, r.Text(), nil
	}
	msg := fmt.Sprintf("tool %s exited with status %d", inst.tool, code)
	if tail := inst.stderr.tail(500); tail != "" {
		msg += ": " + tail
	}
	return nil, msg, nil
}

func (inst *instance) usedGrants() []string {
	if inst.clockUsed {
		inst.use("clock")
	}
	if inst.randUsed {
		inst.use("random")
	}
	out := make([]string, 0, len(inst.used))
	for g := range inst.used {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

func grantStrings(gs []manifest.Grant) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.String()
	}
	return out
}
