package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

const forgetSystemPrompt = `You delete facts from a memory when asked to. You get an instruction and a list of facts, each with its id.
Return the ids of the facts the instruction truly targets, and only those.
- Beware of names and identifiers that merely look alike: "Paul Martin" is not "Paul Martineau", "case 12" is not "case 120".
- Accept variants of the same identifier (spacing, case, abbreviations) and instructions written in another language.
- Never select a fact that only partly concerns the target (a fact that also holds other information): leave it.
- When in doubt, keep the fact.
Answer ONLY with JSON: {"forget":[<ids>],"reason":"<one short sentence>"}. Answer {"forget":[],"reason":"..."} when nothing matches.`

// ForgetMatching implements [Forgetter]. One model call picks, among the
// current facts (at most MaxConsolidationFacts of them: those sharing words
// with the instruction first, then the most recent), the ones the
// instruction targets. The answer is read strictly: anything but a JSON
// object whose "forget" list holds only ids that were shown (integers or
// strings of digits) erases nothing and returns an error wrapping
// [ErrForgetRefused]. There is no repair of a truncated answer on this
// path. The earlier versions of an erased fact are erased with it, and so
// are their embedding vectors. The model's usage is reported by the next
// Compact.
func (f *Fact) ForgetMatching(ctx context.Context, instruction string, dryRun bool) ([]Record, error) {
	instruction = strings.TrimSpace(instruction)
	if instruction == "" {
		return nil, ErrEmptyInstruction
	}
	if f.opts.Provider == nil {
		return nil, ErrNoProvider
	}
	f.mu.Lock()
	f.syncIndex()
	candidates := f.forgetCandidates(instruction)
	f.mu.Unlock()
	if len(candidates) == 0 {
		return nil, nil
	}

	var user strings.Builder
	user.WriteString("Instruction: ")
	user.WriteString(instruction)
	user.WriteString("\n\nFacts:\n")
	shown := make(map[int64]bool, len(candidates))
	for _, r := range candidates {
		shown[r.ID] = true
		fmt.Fprintf(&user, "[id %d] %s", r.ID, r.Text)
		if r.Subject != "" {
			fmt.Fprintf(&user, " (%s)", r.Subject)
		}
		user.WriteByte('\n')
	}
	text, _, usage, err := askModel(ctx, f.opts.Provider, f.opts.Model, forgetSystemPrompt, user.String(), 400, true)
	f.addPending(usage)
	if err != nil {
		return nil, fmt.Errorf("%w: the model call failed: %w", ErrForgetRefused, err)
	}
	ids, err := parseForgetIDs(text, shown)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrForgetRefused, err)
	}
	if len(ids) == 0 {
		return nil, nil
	}

	targets := func(s *FactState) map[int64]bool {
		all := make(map[int64]bool)
		for id := range ids {
			if r, ok := s.get(id); ok && r.Current() {
				all[id] = true
				for _, p := range s.predecessors(id) {
					all[p] = true
				}
			}
		}
		return all
	}
	if dryRun {
		f.mu.Lock()
		defer f.mu.Unlock()
		want := targets(f.state)
		var out []Record
		for _, r := range f.state.Facts {
			if want[r.ID] {
				out = append(out, r)
			}
		}
		return out, nil
	}
	var gone []Record
	err = f.update(ctx, func(s *FactState) error {
		gone = s.erase(targets(s))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(gone) > 0 {
		if err := f.purgeVectors(ctx); err != nil {
			return gone, fmt.Errorf("memory: facts erased, but their embedding vectors could not be: %w", err)
		}
	}
	return gone, nil
}

// forgetCandidates returns the current facts to show the forget call.
// Callers hold f.mu with the index synced.
func (f *Fact) forgetCandidates(instruction string) []Record {
	cur := f.state.current()
	k := f.opts.MaxConsolidationFacts
	if len(cur) <= k {
		return cur
	}
	picked := make(map[int64]bool, k)
	var out []Record
	for _, id := range ranked(f.recall.bm25.score(instruction)) {
		if len(out) == k {
			break
		}
		if r, ok := f.state.get(id); ok {
			picked[id] = true
			out = append(out, r)
		}
	}
	for _, r := range sortedByUpdated(cur) {
		if len(out) == k {
			break
		}
		if !picked[r.ID] {
			out = append(out, r)
		}
	}
	return sortedByID(out)
}

// parseForgetIDs reads a forget answer strictly (see ForgetMatching).
func parseForgetIDs(text string, shown map[int64]bool) (map[int64]bool, error) {
	var ans struct {
		Forget *[]json.RawMessage `json:"forget"`
	}
	if err := decodeFirst(stripFences(text), &ans); err != nil {
		return nil, fmt.Errorf("the answer is not the JSON object asked for: %w", err)
	}
	if ans.Forget == nil {
		return nil, fmt.Errorf(`the answer has no "forget" list`)
	}
	ids := make(map[int64]bool, len(*ans.Forget))
	for _, raw := range *ans.Forget {
		id, ok := parseID(raw)
		if !ok {
			return nil, fmt.Errorf("the answer lists %s, which is not a fact id", raw)
		}
		if !shown[id] {
			return nil, fmt.Errorf("the answer lists id %d, which was not among the facts shown", id)
		}
		ids[id] = true
	}
	return ids, nil
}
