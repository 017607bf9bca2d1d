package synth

import (
	"github.com/autoagent-go/autoagent/manifest"
)

// capGrants parses the capabilities a tool asks for and checks them against
// the ceiling: every requested grant must be covered by a grant of the
// ceiling, or the tool is refused with a *GrantError (nothing is silently
// dropped, so a tool never runs with less than it was written for without
// the model knowing).
func capGrants(requested []string, ceiling []manifest.Grant) ([]manifest.Grant, error) {
	gs, err := manifest.ParseGrants(requested)
	if err != nil {
		return nil, reject(StageScreen, "capabilities: %v", err)
	}
	if over := manifest.Exceeding(ceiling, gs); len(over) > 0 {
		ge := &GrantError{}
		for _, g := range over {
			ge.Requested = append(ge.Requested, g.String())
		}
		for _, g := range ceiling {
			ge.Ceiling = append(ge.Ceiling, g.String())
		}
		return nil, &RejectError{Stage: StageScreen, Reason: ge.Error(), grant: ge}
	}
	return gs, nil
}
