package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/marker"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
)

func TestInjectionIsBlocked(t *testing.T) {
	for _, approve := range []bool{false, true} {
		var out bytes.Buffer
		o, err := run(context.Background(), &out, approve)
		if err != nil {
			t.Fatalf("approve=%v: %v\n%s", approve, err, out.String())
		}
		if o.emailsSent != 0 {
			t.Fatalf("approve=%v: the e-mail was sent\n%s", approve, out.String())
		}
		if !o.result.Tainted || o.result.StopReason != loop.StopDone {
			t.Errorf("approve=%v: result %+v", approve, o.result)
		}
		var refusal string
		for _, m := range o.result.Messages {
			for _, r := range m.ToolResults() {
				if r.Name == "send_email" {
					refusal = r.Content
				}
			}
		}
		want := "EgressBlocked: "
		if approve {
			want = "ToolPolicyDenied: rejected by a human reviewer"
		}
		if !strings.HasPrefix(refusal, want) {
			t.Errorf("approve=%v: send_email result %q, want prefix %q", approve, refusal, want)
		}
		// The trace says which guard stopped it.
		if approve {
			if o.summary.Approvals != 1 || o.summary.Refusals["approval_decision"] != 1 || o.summary.Refusals["trifecta_block"] != 0 {
				t.Errorf("approve mode trace: approvals %d, refusals %v", o.summary.Approvals, o.summary.Refusals)
			}
		} else if o.summary.Refusals["trifecta_block"] != 1 || o.summary.Approvals != 0 {
			t.Errorf("deny mode trace: approvals %d, refusals %v", o.summary.Approvals, o.summary.Refusals)
		}
		// The model was told, and saw the page framed as untrusted data.
		if fetched := o.result.Messages[3].ToolResults()[0].Content; !strings.HasPrefix(fetched, marker.UntrustedOpen) {
			t.Errorf("page not framed: %q", fetched)
		}
		if !strings.Contains(out.String(), "boot audit: lethal trifecta: untrusted tools [fetch_page] and egress tools [send_email]") {
			t.Errorf("no boot audit in:\n%s", out.String())
		}
		if o.result.Messages[0].Role != llm.RoleSystem {
			t.Error("transcript does not start with the system prompt")
		}
	}
}
