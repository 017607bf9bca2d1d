package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/autoagent-go/autoagent/host"
	"github.com/autoagent-go/autoagent/internal/marker"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/manifest"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/tool"
)

// codeModeAgent is an agent whose sandboxed tool hostcall (a C guest)
// calls the host tool its arguments name through tool_call, on a host made
// with sandbox.HostOptions, beside host tools secret (egress), weather
// (untrusted) and pay.
func codeModeAgent(t *testing.T, ran map[string]*atomic.Int32, policy loop.Policy, target string) *loop.Agent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "wasm", "hostcall.wasm"))
	if err != nil {
		t.Fatalf("test module: %v", err)
	}
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	ctx := context.Background()
	h, err := host.New(ctx, sandbox.HostOptions(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(ctx) })
	grants, err := manifest.ParseGrants([]string{"tools:secret", "tools:weather", "tools:pay"})
	if err != nil {
		t.Fatal(err)
	}
	l, err := h.Load(ctx, host.Module{Name: "hostcall", Bytes: b, Grants: grants})
	if err != nil {
		t.Fatal(err)
	}
	tools := append([]tool.Tool(nil), l.Tools()...)
	for _, hostTool := range []struct {
		name  string
		flags tool.Flags
	}{{"secret", tool.Flags{Egress: true}}, {"weather", tool.Flags{Untrusted: true}}, {"pay", tool.Flags{}}} {
		n := new(atomic.Int32)
		ran[hostTool.name] = n
		tl, err := tool.New(hostTool.name, "A host tool.", func(context.Context, struct {
			City string `json:"city"`
		}) (string, error) {
			n.Add(1)
			return hostTool.name + " for Oslo", nil
		})
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, tool.WithFlags(tl, hostTool.flags))
	}
	reg, err := tool.NewRegistry(tools...)
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"tool": target})
	return &loop.Agent{
		Provider: scripted.New(
			scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "hostcall", Arguments: args}}},
			scripted.Turn{Text: "done"},
		),
		Tools:  reg,
		Checks: loop.Checks{Policy: policy},
	}
}

func resultOf(msgs []llm.Message, id string) string {
	for _, m := range msgs {
		for _, r := range m.ToolResults() {
			if r.CallID == id {
				return r.Content
			}
		}
	}
	return ""
}

var denySecretApprovePay = loop.PolicyFunc(func(_ context.Context, in *loop.PolicyInput) (loop.Decision, error) {
	switch in.Call.Name {
	case "secret":
		return loop.Decision{Verdict: loop.VerdictDeny, Reason: "secrets stay on the host"}, nil
	case "pay":
		return loop.Decision{Verdict: loop.VerdictApprove}, nil
	}
	return loop.Decision{}, nil
})

// A guest's call of a host tool the policy denies is denied: the host tool
// does not run and the guest's result carries the refusal.
func TestCodeModePolicyDenies(t *testing.T) {
	ran := map[string]*atomic.Int32{}
	a := codeModeAgent(t, ran, denySecretApprovePay, "secret")
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if ran["secret"].Load() != 0 {
		t.Fatal("the denied host tool ran")
	}
	if got := resultOf(res.Messages, "c1"); !strings.Contains(got, "ToolPolicyDenied: secrets stay on the host") {
		t.Errorf("the guest's result: %q", got)
	}
}

// A guest's call of an untrusted host tool taints the run.
func TestCodeModeUntrustedTaints(t *testing.T) {
	ran := map[string]*atomic.Int32{}
	a := codeModeAgent(t, ran, nil, "weather")
	res, err := a.Run(context.Background(), "go")
	if err != nil {
		t.Fatal(err)
	}
	if ran["weather"].Load() != 1 || !res.State.Tainted || !strings.Contains(resultOf(res.Messages, "c1"), marker.UntrustedOpen) {
		t.Errorf("weather ran %d, tainted %v, result %q", ran["weather"].Load(), res.State.Tainted, resultOf(res.Messages, "c1"))
	}
}

// An approve rule on the host tool pauses the run; approved, the guest runs
// again and the host tool runs once.
func TestCodeModeApprovalPauses(t *testing.T) {
	ran := map[string]*atomic.Int32{}
	a := codeModeAgent(t, ran, denySecretApprovePay, "pay")
	res, err := a.Run(context.Background(), "go")
	if !errors.Is(err, loop.ErrApprovalRequired) || len(res.State.Pending) != 1 || res.State.Pending[0].Parent != "c1" {
		t.Fatalf("err %v, pending %+v", err, res.State.Pending)
	}
	if ran["pay"].Load() != 0 {
		t.Fatal("pay ran before approval")
	}
	res, err = a.Resume(context.Background(), res.State, loop.Approve(res.State.Pending[0].Call.ID))
	if err != nil {
		t.Fatal(err)
	}
	if ran["pay"].Load() != 1 || !strings.Contains(resultOf(res.Messages, "c1"), "pay for Oslo") {
		t.Errorf("after approval: pay ran %d; %q", ran["pay"].Load(), resultOf(res.Messages, "c1"))
	}
}

// Outside a run there is no policy to apply: the call is refused.
func TestCodeModeOutsideARunIsRefused(t *testing.T) {
	ran := map[string]*atomic.Int32{}
	a := codeModeAgent(t, ran, nil, "pay")
	hc, _ := a.Tools.Get("hostcall")
	res, err := hc.Call(context.Background(), tool.Call{ID: "x", Name: "hostcall", Arguments: json.RawMessage(`{"tool":"pay"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if ran["pay"].Load() != 0 || !strings.Contains(res.Text(), "not called from a tool of a running agent") {
		t.Errorf("pay ran %d; result %q", ran["pay"].Load(), res.Text())
	}
}
