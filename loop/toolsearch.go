package loop

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/autoagent-go/autoagent/internal/bm25"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop/refusal"
)

// findToolsName is the meta-tool a run offers instead of a large tool set
// (see Agent.ToolSearchThreshold).
const findToolsName = "find_tools"

// defaultToolSearchThreshold is the number of tools above which a run
// offers find_tools instead of every tool.
const defaultToolSearchThreshold = 20

// toolSearch is a run's deferred tool set: the model is offered
// find_tools and the tools it revealed so far; every call still goes
// through the full registry, guards and policy.
type toolSearch struct {
	mu       sync.Mutex
	all      []llm.ToolSpec // the registry's, in its order
	index    *bm25.Index
	revealed map[string]bool
}

// newToolSearch indexes specs, with names revealed before (resume). The
// run makes one only past Agent.ToolSearchThreshold.
func newToolSearch(specs []llm.ToolSpec, revealed []string) *toolSearch {
	s := &toolSearch{all: specs, index: bm25.New(), revealed: map[string]bool{}}
	for i, sp := range specs {
		s.index.Add(int64(i+1), searchDocument(sp))
	}
	for _, n := range revealed {
		s.revealed[n] = true
	}
	return s
}

// searchDocument is what find_tools matches: the name (split on _ and -),
// the description and the names of the input's properties.
func searchDocument(sp llm.ToolSpec) string {
	words := []string{sp.Name, strings.NewReplacer("_", " ", "-", " ").Replace(sp.Name), sp.Description}
	var schema struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(sp.InputSchema, &schema) == nil {
		for name, p := range schema.Properties {
			words = append(words, name, strings.ReplaceAll(name, "_", " "), p.Description)
		}
	}
	return strings.Join(words, " ")
}

var findToolsSpec = llm.ToolSpec{
	Name:        findToolsName,
	Description: "Search the tools available to you by what you need to do; the tools found become callable. Call it before using a tool you have not been offered.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what the tool should do, in a few words"},"limit":{"type":"integer","minimum":1,"maximum":20,"description":"how many tools to find (default 5)"}},"required":["query"],"additionalProperties":false}`),
}

// offered is what the model is sent: find_tools, then the revealed tools
// in the registry's order.
func (s *toolSearch) offered() []llm.ToolSpec {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []llm.ToolSpec{findToolsSpec}
	for _, sp := range s.all {
		if s.revealed[sp.Name] {
			out = append(out, sp)
		}
	}
	return out
}

func (s *toolSearch) isRevealed(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revealed[name]
}

// names returns the revealed names, sorted (for the run's state).
func (s *toolSearch) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.revealed))
	for n := range s.revealed {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// find runs find_tools: the best matches are revealed and listed.
func (s *toolSearch) find(args json.RawMessage) (string, bool) {
	var in struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(args, &in); err != nil || strings.TrimSpace(in.Query) == "" {
		return `find_tools needs {"query": "what the tool should do"}`, true
	}
	if in.Limit <= 0 {
		in.Limit = 5
	}
	in.Limit = min(in.Limit, 20)
	scored := s.index.ScoreList(in.Query)
	slices.SortFunc(scored, func(a, b bm25.Scored) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return int(a.ID - b.ID)
	})
	if len(scored) == 0 {
		return fmt.Sprintf("No tool matches %q. Try other words for what you need.", in.Query), false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	b.WriteString("These tools are now available to you:\n")
	for _, sc := range scored[:min(len(scored), in.Limit)] {
		sp := s.all[sc.ID-1]
		s.revealed[sp.Name] = true
		fmt.Fprintf(&b, "- %s: %s\n", sp.Name, sp.Description)
	}
	return b.String(), false
}

func notOfferedMessage(name string) refusal.Refusal {
	return refusal.New(refusal.NotOffered, "`%s` has not been offered to you yet. Call %s with what you need to do to find the tools you may call.", name, findToolsName)
}
