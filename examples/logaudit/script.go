package main

import (
	"encoding/json"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// scriptedProvider is the orchestrator's scripted model.
type scriptedProvider = scripted.Provider

func call(id, name string, args any) llm.ToolCall {
	b, _ := json.Marshal(args)
	return llm.ToolCall{ID: id, Name: name, Arguments: b}
}

func gatewayScript() *scripted.Provider {
	return scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("g1", "read_file", map[string]string{"path": "gateway.log"})}},
		scripted.Turn{Text: "502s: 10:00:07 r-1002 p-502; 10:03:33 r-1007 p-507; 10:05:55 r-1009 p-511 (all upstream=payments, ~30 s)."},
	)
}

func paymentsScript() *scripted.Provider {
	return scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("p1", "read_file", map[string]string{"path": "payments.log"})}},
		scripted.Turn{Text: "FAILED: 10:00:07 p-502 ledger-timeout; 10:03:02 p-505 card-declined; 10:03:33 p-507 ledger-timeout; 10:05:55 p-511 ledger-timeout."},
	)
}

const report = `# Payment incident, 2026-03-02

Every gateway 502 matches exactly one FAILED payment (ledger timeouts):

| time | request | payment | payment state |
|---|---|---|---|
| 10:00:07 | r-1002 | p-502 | FAILED ledger-timeout |
| 10:03:33 | r-1007 | p-507 | FAILED ledger-timeout |
| 10:05:55 | r-1009 | p-511 | FAILED ledger-timeout |

p-505 FAILED too (card declined) but the gateway answered 402: not part of the incident.
`

func orchestratorScript() *scripted.Provider {
	return scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{
			call("o1", "gateway_analyst", map[string]string{"request": "List every 502 in gateway.log with its payment id."}),
			call("o2", "payments_analyst", map[string]string{"request": "List every FAILED payment in payments.log."}),
		}},
		scripted.Turn{ToolCalls: []llm.ToolCall{
			call("o3", "write_file", map[string]string{"path": "report.md", "content": report, "reason": "the audit report"}),
		}},
		// A shorter report that drops a payment: the host's validator
		// refuses it and the change is rolled back.
		scripted.Turn{ToolCalls: []llm.ToolCall{
			call("o4", "propose_change", map[string]any{"reason": "a shorter report", "files": []map[string]string{
				{"path": "report.md", "content": "# Payment incident\n\n502s p-502 and p-507 match FAILED ledger timeouts.\n"}}}),
		}},
		scripted.Turn{ToolCalls: []llm.ToolCall{
			call("o5", "propose_change", map[string]any{"reason": "add a timeline", "files": []map[string]string{
				{"path": "report.md", "content": report + "\nTimeline: the ledger timed out three times in six minutes (10:00, 10:03, 10:05).\n"},
				{"path": "timeline.md", "content": "- 10:00:07 p-502\n- 10:03:33 p-507\n- 10:05:55 p-511\n"}}}),
		}},
		scripted.Turn{Text: "Saved _out/report.md: three gateway 502s, each matched to one FAILED payment (ledger timeouts)."},
	)
}
