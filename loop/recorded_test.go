package loop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// recordedTurn is one model answer decoded from a recorded response, and
// the tool results (name → content, in order) the real client sent next.
type recordedTurn struct {
	turn    scripted.Turn
	results [][2]string // call id (or "" for Gemini), content
}

// decodeOpenAI decodes a chat.completions response and the tool messages
// of the following request.
func decodeOpenAI(t *testing.T, resp, nextReq string) recordedTurn {
	var r struct {
		Choices []struct {
			Message struct {
				Content   *string
				ToolCalls []struct {
					ID       string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
		}
		Usage struct {
			Prompt     int64 `json:"prompt_tokens"`
			Completion int64 `json:"completion_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(resp), &r); err != nil {
		t.Fatal(err)
	}
	m := r.Choices[0].Message
	var rt recordedTurn
	if m.Content != nil {
		rt.turn.Text = *m.Content
	}
	for _, c := range m.ToolCalls {
		rt.turn.ToolCalls = append(rt.turn.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: json.RawMessage(c.Function.Arguments)})
	}
	rt.turn.Usage = &llm.Usage{InputTokens: r.Usage.Prompt, OutputTokens: r.Usage.Completion}
	if nextReq != "" {
		var req struct {
			Messages []struct {
				Role       string
				Content    any
				ToolCallID string `json:"tool_call_id"`
			}
		}
		if err := json.Unmarshal([]byte(nextReq), &req); err != nil {
			t.Fatal(err)
		}
		for _, msg := range req.Messages {
			if msg.Role == "tool" {
				rt.results = append(rt.results, [2]string{msg.ToolCallID, fmt.Sprint(msg.Content)})
			}
		}
	}
	return rt
}

// decodeGemini decodes a generateContent response and the function
// responses of the following request. Gemini sends no call ids.
func decodeGemini(t *testing.T, resp, nextReq string) recordedTurn {
	var r struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text         string
					FunctionCall *struct {
						Name string
						Args json.RawMessage
					}
				}
			}
		}
		UsageMetadata struct {
			Prompt     int64 `json:"promptTokenCount"`
			Candidates int64 `json:"candidatesTokenCount"`
		}
	}
	if err := json.Unmarshal([]byte(resp), &r); err != nil {
		t.Fatal(err)
	}
	var rt recordedTurn
	for _, p := range r.Candidates[0].Content.Parts {
		rt.turn.Text += p.Text
		if p.FunctionCall != nil {
			rt.turn.ToolCalls = append(rt.turn.ToolCalls, llm.ToolCall{Name: p.FunctionCall.Name, Arguments: p.FunctionCall.Args})
		}
	}
	rt.turn.Usage = &llm.Usage{InputTokens: r.UsageMetadata.Prompt, OutputTokens: r.UsageMetadata.Candidates}
	if nextReq != "" {
		var req struct {
			Contents []struct {
				Parts []struct {
					FunctionResponse *struct {
						Name     string
						Response struct{ Result any }
					}
				}
			}
		}
		if err := json.Unmarshal([]byte(nextReq), &req); err != nil {
			t.Fatal(err)
		}
		for _, c := range req.Contents {
			for _, p := range c.Parts {
				if p.FunctionResponse != nil {
					rt.results = append(rt.results, [2]string{"", fmt.Sprint(p.FunctionResponse.Response.Result)})
				}
			}
		}
	}
	return rt
}

type twoInts struct {
	A int `json:"a" jsonschema:"first number"`
	B int `json:"b" jsonschema:"second number"`
}

// TestRecordedParallelCalls replays real recorded parallel tool calls
// (OpenAI, an OpenAI-compatible server, Gemini) through the loop and checks
// that it sends back the results exactly as the recording's client did: in
// the model's call order, answering the model's call ids.
func TestRecordedParallelCalls(t *testing.T) {
	cases := []struct {
		file   string
		decode func(*testing.T, string, string) recordedTurn
	}{
		{"TestOpenAICommon/openai-gpt-4o/multi_tool.yaml", decodeOpenAI},
		{"TestOpenAICompatibleCommon/groq-kimi-k2/multi_tool.yaml", decodeOpenAI},
		{"TestGoogleCommon/gemini-2.5-flash/multi_tool.yaml", decodeGemini},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			ex := fixturetest.Cassette(t, "fantasy/"+c.file)
			if len(ex) != 2 {
				t.Fatalf("%d interactions", len(ex))
			}
			first := c.decode(t, ex[0].Answer.Body, ex[1].Request.Body)
			final := c.decode(t, ex[1].Answer.Body, "")
			if len(first.turn.ToolCalls) < 2 {
				t.Fatalf("recording has %d tool calls, want parallel calls", len(first.turn.ToolCalls))
			}
			add := tool.Must(tool.New("add", "Add two numbers", func(_ context.Context, in twoInts) (string, error) { return fmt.Sprint(in.A + in.B), nil }))
			mul := tool.Must(tool.New("multiply", "Multiply two numbers", func(_ context.Context, in twoInts) (string, error) { return fmt.Sprint(in.A * in.B), nil }))
			p := scripted.New(first.turn, final.turn)
			a := &loop.Agent{Provider: p, Tools: registry(t, add, mul)}
			res, err := a.Run(context.Background(), "Add and multiply the number 2 and 3")
			if err != nil {
				t.Fatal(err)
			}
			sent := resultsSent(p.Requests()[1])
			if len(sent) != len(first.results) {
				t.Fatalf("sent %d results, the recorded client sent %d", len(sent), len(first.results))
			}
			calls := res.Messages[2].ToolCalls()
			seen := map[string]bool{}
			for i, want := range first.results {
				if sent[i].Content != want[1] || sent[i].IsError {
					t.Errorf("result %d = %+v, recorded %q", i, sent[i], want[1])
				}
				if want[0] != "" && sent[i].CallID != want[0] {
					t.Errorf("result %d answers %q, recorded %q", i, sent[i].CallID, want[0])
				}
				if sent[i].CallID != calls[i].ID || calls[i].ID == "" || seen[calls[i].ID] {
					t.Errorf("result %d answers %q; call ids %v must be unique, non-empty, in order", i, sent[i].CallID, calls)
				}
				seen[calls[i].ID] = true
			}
			if res.Output != final.turn.Text {
				t.Errorf("output %q, recorded %q", res.Output, final.turn.Text)
			}
			if want := first.turn.Usage.InputTokens + final.turn.Usage.InputTokens; res.Usage.InputTokens != want {
				t.Errorf("input tokens %d, recorded %d", res.Usage.InputTokens, want)
			}
		})
	}
}
