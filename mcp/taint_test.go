package mcp_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

// A client's call runs in a taint scope: tainted from its start by default
// (the arguments come from another agent's model), so what a served tool
// writes for it stays untrusted; with TrustedClients it starts clean, and a
// tool's report of untrusted content still taints the rest of the call.
func TestServedCallsCarryATaintScope(t *testing.T) {
	probe := fnTool("probe", `{"type":"object","properties":{"report":{"type":"boolean"}}}`, func(ctx context.Context, c tool.Call) (tool.Result, error) {
		_, scoped := tool.TaintScopeFrom(ctx)
		before := tool.Tainted(ctx)
		if string(c.Arguments) == `{"report":true}` {
			tool.ReportTaint(ctx)
		}
		return tool.Text(fmt.Sprintf("scoped=%v before=%v after=%v", scoped, before, tool.Tainted(ctx))), nil
	})
	for _, c := range []struct {
		trusted bool
		args    string
		want    string
	}{
		{false, `{}`, "scoped=true before=true after=true"},
		{true, `{}`, "scoped=true before=false after=false"},
		{true, `{"report":true}`, "scoped=true before=false after=true"},
	} {
		srv := mcp.NewServer(mcp.ServerOptions{TrustedClients: c.trusted})
		if err := srv.SetTools([]tool.Tool{probe}); err != nil {
			t.Fatal(err)
		}
		cl := pipe(t, srv, mcp.ClientOptions{})
		tools := cl.Tools()
		if len(tools) != 1 {
			t.Fatalf("tools: %v", tools)
		}
		if got := mustCall(t, tools[0], c.args).Text(); got != c.want {
			t.Errorf("trusted %v, %s: %q; want %q", c.trusted, c.args, got, c.want)
		}
	}
}

// The client's own check of a call's arguments against the tool's input
// schema is the host's refusal (tool.Result.HostText), so the loop does
// not frame it as the untrusted server's words; what the server says is
// never HostText.
func TestClientArgumentCheckIsHostText(t *testing.T) {
	echo := fnTool("echo", `{"type":"object","properties":{"msg":{"type":"string"}},"required":["msg"]}`, func(_ context.Context, c tool.Call) (tool.Result, error) {
		return tool.Errorf("server says no"), nil
	})
	srv := mcp.NewServer(mcp.ServerOptions{})
	if err := srv.SetTools([]tool.Tool{echo}); err != nil {
		t.Fatal(err)
	}
	tools := pipe(t, srv, mcp.ClientOptions{}).Tools()
	if len(tools) != 1 || !tool.FlagsOf(tools[0]).Untrusted {
		t.Fatalf("tools: %v", tools)
	}
	if r := mustCall(t, tools[0], `{"msg":7}`); !r.IsError || !r.HostText {
		t.Errorf("arguments refused by the client: %+v, want an error result in the host's words", r)
	}
	if r := mustCall(t, tools[0], `{"msg":"hi"}`); !r.IsError || r.HostText {
		t.Errorf("the server's own failure: %+v, want an error result that is not the host's", r)
	}
}
