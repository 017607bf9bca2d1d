package memory_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
	"github.com/autoagent-go/autoagent/memory/memorytest"
)

// alwaysModel answers every memory call: a summary naming how many lines
// it read, or one "add" operation per user line of the exchanges.
func alwaysModel() *fakeModel {
	return &fakeModel{fn: func(req *llm.Request) (*llm.Response, error) {
		prompt := userText(req)
		_, exchanges, _ := strings.Cut(prompt, "New exchanges:\n")
		if req.ResponseFormat == nil {
			return answer("The conversation covered "+itoa(strings.Count(exchanges, "\n"))+" messages.", 10, 5), nil
		}
		var ops []map[string]string
		for _, line := range strings.Split(exchanges, "\n") {
			if text, ok := strings.CutPrefix(line, "user: "); ok {
				ops = append(ops, map[string]string{"op": "add", "fact": text, "subject": "user"})
			}
		}
		b, _ := json.Marshal(map[string]any{"operations": ops})
		return answer(string(b), 20, 8), nil
	}}
}

func TestConformanceBuffer(t *testing.T) {
	memorytest.Run(t, memorytest.Options{
		HardCap: 8,
		New: func(t *testing.T) memory.Memory {
			b, err := memory.NewBuffer(memory.BufferOptions{MaxMessages: 8})
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	})
}

func TestConformanceSummarizing(t *testing.T) {
	memorytest.Run(t, memorytest.Options{
		New: func(t *testing.T) memory.Memory {
			s, err := memory.NewSummarizing(memory.SummarizingOptions{Provider: alwaysModel(), MaxMessages: 10, KeepRecent: 4})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	})
}

func TestConformanceFact(t *testing.T) {
	for name, background := range map[string]bool{"Foreground": false, "Background": true} {
		t.Run(name, func(t *testing.T) {
			memorytest.Run(t, memorytest.Options{
				New: func(t *testing.T) memory.Memory {
					return newFact(t, alwaysModel(), memory.FactOptions{
						Path:        filepath.Join(t.TempDir(), "facts.json"),
						MaxMessages: 10, KeepRecent: 4, MaxFacts: 200,
						Background: background,
					})
				},
			})
		})
	}
}
