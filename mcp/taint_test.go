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
