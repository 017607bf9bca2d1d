package loop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/loop/refusal"
	"github.com/autoagent-go/autoagent/tool"
)

// The lethal trifecta is private data, untrusted content and a way out in
// one run: a page the agent reads can tell it to send what it knows
// elsewhere. Once a run is tainted, the guard stops calls to tools flagged
// egress (deny), pauses them for a human (approve), or lets them through
// (off). It only concerns tools explicitly flagged egress.

func egressBlockedMessage(name string) refusal.Refusal {
	return refusal.New(refusal.EgressBlocked, "`%s` can send data out of the system and this run has already ingested untrusted external content. The call was refused by policy, not by the model. Summarise your finding to the user instead of transmitting it.", name)
}

func egressApprovalReason(name string) string {
	return fmt.Sprintf("egress tool `%s` requested after untrusted content entered the run (lethal trifecta) — human approval required", name)
}

// AuditTrifecta returns the risky tool combinations of the agent, for a
// boot-time check: one finding when it has both tools flagged untrusted and
// tools flagged egress, naming both sets and the guard's mode; nil
// otherwise.
func (a *Agent) AuditTrifecta() []string {
	if a.Tools == nil {
		return nil
	}
	var untrusted, egress []string
	for _, t := range a.Tools.Tools() {
		f := tool.FlagsOf(t)
		name := t.Spec().Name
		if f.Untrusted {
			untrusted = append(untrusted, name)
		}
		if f.Egress {
			egress = append(egress, name)
		}
	}
	if len(untrusted) == 0 || len(egress) == 0 {
		return nil
	}
	slices.Sort(untrusted)
	slices.Sort(egress)
	mode := a.Bounds.resolved().Trifecta
	consequence := map[TrifectaMode]string{
		TrifectaDeny:    "egress calls are refused once the run is tainted",
		TrifectaApprove: "egress calls pause for human approval once the run is tainted",
		TrifectaOff:     "NOTHING stops an injected instruction from exfiltrating data",
	}[mode]
	if a.Bounds.ShadowGuards && mode == TrifectaDeny {
		consequence = "shadow mode: refusals are only traced, NOT enforced"
	}
	return []string{fmt.Sprintf("lethal trifecta: untrusted tools [%s] and egress tools [%s] share this agent; trifecta guard is %q (%s)",
		strings.Join(untrusted, ", "), strings.Join(egress, ", "), mode, consequence)}
}
