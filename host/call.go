package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/sys"

	"github.com/autoagent-go/autoagent/host/internal/kernel"
	"github.com/autoagent-go/autoagent/internal/jsonvalue"
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
	prefix  []byte // the call document up to the arguments
	suffix  []byte // and after them
	// export is the Extism function the tool calls instead of call (see
	// ToolDescription.Export), "" for a tool of call.
	export string
	// anyObject: the input schema accepts every JSON object.
	anyObject bool
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
		Tool: t.name, CallID: c.ID, Grants: manifest.GrantStrings(l.grants),
	}
	res, err := t.call(ctx, c, &rec)
	rec.Duration = time.Since(rec.Start)
	if rec.Outcome != OutcomeOK && res.IsError {
		rec.Error = res.Text()
	}
	if fn := l.h.opts.OnCall; fn != nil {
		fn(ctx, rec)
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
	args := c.Arguments
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	if err := t.validate(args); err != nil {
		rec.Outcome = OutcomeInvalidArgs
		return tool.InvalidArguments("%v", err), nil
	}
	if ctx.Value(callNodeKey{}) == nil {
		// An outermost call takes its turn (Options.MaxCalls); a nested
		// one runs in its parent's.
		if err := l.h.enterCall(ctx); err != nil {
			rec.Outcome = OutcomeCancelled
			return tool.Errorf("%v", err), err
		}
		defer l.h.leaveCall()
	}
	if l.remote != nil {
		c.Arguments = args
		return t.callRemote(ctx, c, rec)
	}
	input := callInput{t.prefix, args, t.suffix}
	if t.export != "" {
		input = callInput{exportInput(args)}
	}
	rec.InputBytes = input.len()
	parent, err := parentNode(ctx, l.limits)
	if err != nil {
		rec.Outcome = OutcomeLimit
		return tool.Errorf("%v", err), nil
	}

	inst, pooled, err := l.acquire(ctx)
	rec.Pooled = pooled
	if err != nil {
		return t.failure(ctx, err, rec)
	}
	if err := inst.joinTree(parent, l.limits); err != nil {
		l.releaseInstance(inst, true)
		return t.failure(ctx, err, rec)
	}
	// An instance kept across calls (Module.Reuse, a stateful module)
	// holds what its earlier calls left in its memory.
	if inst.tainted {
		tool.ReportTaint(ctx)
	}
	var (
		out     []byte
		failure string
	)
	if t.export != "" {
		out, failure, err = inst.runExport(ctx, t.name, t.export, input)
	} else {
		out, failure, err = inst.run(ctx, t.name, input)
	}
	inst.leaveTree()
	// What a tainted caller passed in, or what reached the call while it
	// ran, may stay in the instance's memory.
	inst.tainted = inst.tainted || tool.Tainted(ctx)
	rec.MemoryPeak = inst.call.peak
	rec.Used = inst.usedGrants()
	rec.Denied = inst.call.denied
	rec.OutputBytes = len(out)
	if err != nil {
		l.releaseInstance(inst, false)
		return t.failure(ctx, err, rec)
	}
	if failure != "" {
		l.releaseInstance(inst, false)
		rec.Outcome = OutcomeToolError
		return tool.Errorf("%s", failure), nil
	}
	if t.export != "" {
		return exportResult(t.name, out, inst, rec), nil
	}
	// out is the instance's memory: parse it before the instance serves
	// another call.
	res, err := parseResult(out, t.out)
	if err == nil && inst.call.listChanged {
		l.listsChanged(ctx, inst)
	}
	l.releaseInstance(inst, err == nil)
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

// joinTree makes the instance the call nested in parent (the root of a
// new tree when parent is nil) and charges its memory to the tree; its
// growth is charged as it happens (linearMemory.Reallocate). A root's tree
// lives in the instance itself, so an outermost call allocates nothing.
func (inst *instance) joinTree(parent *callNode, limits Limits) error {
	if parent == nil {
		inst.rootTree = callTree{limit: limits.CallTreeMemory}
		inst.node = callNode{tree: &inst.rootTree, depth: 1}
	} else {
		inst.node = callNode{tree: parent.tree, depth: parent.depth + 1}
	}
	t := inst.node.tree
	n := inst.linear.chargedSize() + inst.kmem.chargedSize()
	if !t.charge(n) {
		return limitErr(LimitCallTreeMemory, t.limit)
	}
	inst.tree, inst.treeCharged = t, n
	return nil
}

// leaveTree gives the instance's memory back to its call tree.
func (inst *instance) leaveTree() {
	if inst.tree != nil {
		inst.tree.charge(-inst.treeCharged)
		inst.tree, inst.treeCharged = nil, 0
	}
}

// validate checks the arguments against the tool's input schema. A schema
// that asks for nothing but an object is checked by the host's scanner;
// the schema validator, which decodes the whole document, then only runs
// to explain a failure.
func (t *moduleTool) validate(args json.RawMessage) error {
	if t.anyObject && jsonvalue.IsObject(args) {
		return nil
	}
	return t.in.Validate(args)
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

// callInput is the call document {"params":{"name":N,"arguments":A}},
// in three parts so the arguments are never copied but into the guest.
type callInput [3][]byte

// inputSuffix closes the call document.
var inputSuffix = []byte("}}")

// hyper-mcp v2's documents: call_tool's input is {"request":{"name",
// "arguments"},"context":{"id","_meta"}}, list_tools' {"context":{...}}.
var (
	v2Suffix    = []byte(`},"context":{"id":0,"_meta":{}}}`)
	v2ListInput = []byte(`{"context":{"id":0,"_meta":{}}}`)
)

// callPrefix opens the call document of tool name for the module's
// interface.
func (l *Loaded) callPrefix(name string) []byte {
	if l.entry.v2 {
		n, _ := json.Marshal(name)
		return append(append([]byte(`{"request":{"name":`), n...), `,"arguments":`...)
	}
	return callPrefix(name)
}

// callSuffix closes the call document for the module's interface.
func (l *Loaded) callSuffix() []byte {
	if l.entry.v2 {
		return v2Suffix
	}
	return inputSuffix
}

// callPrefix opens the call document of tool name, up to its arguments.
func callPrefix(name string) []byte {
	n, _ := json.Marshal(name)
	return append(append([]byte(`{"params":{"name":`), n...), `,"arguments":`...)
}

func (in callInput) len() int { return len(in[0]) + len(in[1]) + len(in[2]) }

// Read makes the input the stdin of a WASI command.
func (in *callInput) Read(p []byte) (int, error) {
	n := 0
	for i := range in {
		c := copy(p[n:], in[i])
		in[i] = in[i][c:]
		n += c
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// run executes one call on inst: `call` for an Extism plugin (or describe
// when inst.fn is describe), `_start` for a WASI command. It returns the
// output, or failure when the tool reported one (a non-zero return or
// exit status), or err when the host stopped the call. The output is
// valid until inst runs again or is closed.
func (inst *instance) run(parent context.Context, toolName string, input callInput) (out []byte, failure string, err error) {
	// A fresh instance's first run ends by the deadline it was made under
	// (newInstance), so making it and running it together take no more
	// than the time limit; any other run has the limit from now.
	deadline := inst.deadline
	inst.deadline = time.Time{}
	if deadline.IsZero() {
		deadline = time.Now().Add(inst.limits.Timeout)
	}
	inst.runDeadline = deadline
	rc := inst.startRun(parent, deadline)
	defer inst.endRun(rc)
	var ctx context.Context = rc
	inst.begin(toolName)
	inst.stdout.reset()
	inst.stderr.reset()
	if inst.fn == nil {
		return nil, "", &TrapError{Reason: "the module does not export the function to call"}
	}
	if inst.k.Module() != nil {
		inst.k.Reset()
	}
	// A WASI command has no describe export (its sidecar describes it),
	// so every run is a call, whatever the tool is named.
	if inst.l.abi == ABIWASICommand && !inst.raw {
		return inst.runCommand(ctx, input)
	}
	if n := input.len(); n > 0 {
		err := inst.guard(func() {
			dst, ok := inst.k.SetInput(n)
			if !ok {
				inst.Exceed(LimitMemory)
			}
			for _, part := range input {
				dst = dst[copy(dst, part):]
			}
		})
		if err != nil {
			return nil, "", err
		}
	}
	res, callErr := inst.callGuarded(ctx)
	// proc_exit inside the call ends it as a return would, as extism/go-sdk
	// has it: exit(0) after output is success, exit(n) returns n.
	exited := false
	if code, ok := guestExit(ctx, callErr); ok {
		res, callErr, exited = uint64(code), nil, true
	}
	if err := inst.classify(ctx, callErr); err != nil {
		return nil, "", err
	}
	out, errMsg, err := inst.output()
	if rc := uint32(res); rc != 0 {
		msg := fmt.Sprintf("tool %s returned code %d", toolName, rc)
		if exited {
			msg = fmt.Sprintf("tool %s exited with status %d", toolName, rc)
		}
		if len(errMsg) > 0 {
			msg = capText(errMsg, inst.limits.ErrorText)
		}
		return nil, msg, nil
	}
	// An error set with a return of 0 fails the call too, as it does under
	// extism/go-sdk and the Extism JavaScript host.
	if len(errMsg) > 0 {
		return nil, capText(errMsg, inst.limits.ErrorText), nil
	}
	if err != nil {
		return nil, "", err
	}
	return out, "", nil
}

// guard runs a host-side step that may fail the call the way a host
// function does (inst.fail panics), returning that failure as an error.
func (inst *instance) guard(step func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if inst.call.abort == nil {
				panic(p)
			}
			err = inst.call.abort
		}
	}()
	step()
	return nil
}

// runExport runs the Extism function export for tool toolName: input and
// output through Extism memory, whatever the module's ABI (a command's
// _start is an Extism function to Extism hosts).
func (inst *instance) runExport(ctx context.Context, toolName, export string, input callInput) ([]byte, string, error) {
	fn := inst.fn
	defer func() { inst.fn, inst.raw = fn, false }()
	inst.fn, inst.raw = inst.mod.ExportedFunction(export), true
	return inst.run(ctx, toolName, input)
}

// exportInput is the input of an export tool: its string argument
// "input", else the arguments' JSON text.
func exportInput(args json.RawMessage) []byte {
	var a struct {
		Input *string `json:"input"`
	}
	if json.Unmarshal(args, &a) == nil && a.Input != nil {
		return []byte(*a.Input)
	}
	return args
}

// exportResult is the result of an export tool: its output as text, which
// must be UTF-8. out is the instance's memory: it is copied, and the
// instance released, here.
func exportResult(toolName string, out []byte, inst *instance, rec *CallRecord) tool.Result {
	l := inst.l
	if !utf8.Valid(out) {
		l.releaseInstance(inst, true)
		rec.Outcome = OutcomeBadOutput
		return tool.Errorf("tool %s returned %d bytes that are not UTF-8 text", toolName, len(out))
	}
	text := string(out)
	l.releaseInstance(inst, true)
	rec.Outcome = OutcomeOK
	return tool.Text(text)
}

// mayKeep reports whether inst, after a call that ended well, may serve
// another. A pool keeps no tainted instance for other callers; a stateful
// module's one instance is kept (its state is the point), and taints the
// calls it serves.
func (inst *instance) mayKeep() bool { return inst.l.single != nil || !inst.tainted }

// callGuarded calls inst.fn and returns its result (0 when it has none).
func (inst *instance) callGuarded(ctx context.Context) (uint64, error) {
	inst.stack[0] = 0
	err := inst.invoke(ctx, inst.fn, inst.stack[:])
	return inst.stack[0], err
}

// guestExit reports the status of a proc_exit that ended the call. wazero
// ends a call whose context is done with an exit error of its own, whose
// codes (0xffffffff, 0xefffffff) a guest may pass to proc_exit too: while
// ctx is live they are the guest's.
func guestExit(ctx context.Context, err error) (uint32, bool) {
	if err == nil {
		return 0, false
	}
	var exit *sys.ExitError
	if !errors.As(err, &exit) {
		return 0, false
	}
	switch exit.ExitCode() {
	case sys.ExitCodeContextCanceled, sys.ExitCodeDeadlineExceeded:
		if ctx.Err() != nil {
			return 0, false
		}
	}
	return exit.ExitCode(), true
}

// runCommand runs a WASI command's _start with the input on stdin.
func (inst *instance) runCommand(ctx context.Context, input callInput) ([]byte, string, error) {
	inst.stdin.r = &input
	_, callErr := inst.callGuarded(ctx)
	code := uint32(0)
	if c, ok := guestExit(ctx, callErr); ok {
		code, callErr = c, nil
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
		return nil, capText([]byte(r.Text()), inst.limits.ErrorText), nil
	}
	msg := fmt.Sprintf("tool %s exited with status %d", inst.call.tool, code)
	if tail := inst.stderr.tail(500); tail != "" {
		msg += ": " + tail
	}
	return nil, msg, nil
}

// output returns the call's output (a view of the kernel's memory, valid
// until the instance runs again) and its error message when it set one.
func (inst *instance) output() (out []byte, errMsg []byte, err error) {
	out, errMsg, err = inst.k.Output(inst.limits.Output)
	switch {
	case errors.Is(err, kernel.ErrOutputLimit):
		err = limitErr(LimitOutput, inst.limits.Output)
	case err != nil:
		err = &TrapError{Reason: err.Error()}
	}
	return out, errMsg, err
}

// capText returns b as a string of at most max bytes: a longer text is
// cut at a character boundary and says so.
func capText(b []byte, max int64) string {
	if int64(len(b)) <= max {
		return string(b)
	}
	cut := int(max)
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + fmt.Sprintf("… [error text cut at %s of %s]", formatBytes(max), formatBytes(int64(len(b))))
}

func (inst *instance) usedGrants() []string {
	if inst.call.clockUsed {
		inst.Use("clock")
	}
	if inst.call.randUsed {
		inst.Use("random")
	}
	out := make([]string, 0, len(inst.call.used))
	for g := range inst.call.used {
		out = append(out, g)
	}
	slices.Sort(out)
	return out
}

// enterCall takes one of the host's turns for an outermost call
// (Options.MaxCalls), waiting while ctx allows; leaveCall gives it back.
func (h *Host) enterCall(ctx context.Context) error {
	if h.calls == nil {
		return nil
	}
	select {
	case h.calls <- struct{}{}:
		return nil
	default:
	}
	select {
	case h.calls <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("host: %d calls are running, as many as Options.MaxCalls allows at once, and this one waited for a turn until its context ended: %w", cap(h.calls), ctx.Err())
	}
}

func (h *Host) leaveCall() {
	if h.calls != nil {
		<-h.calls
	}
}
