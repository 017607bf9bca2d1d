package main

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
)

// TestRunJSONReplaysRecordedToolConversations runs `autoagent run --json`
// against a server replaying a real recorded tool conversation per provider
// (../shared/fixtures/providers/fantasy/*/tool.yaml). The recorded model
// asks for a `weather` tool this run does not have, reads the error result,
// and answers; the expected values below were read off the recordings.
func TestRunJSONReplaysRecordedToolConversations(t *testing.T) {
	tests := []struct {
		provider, keyEnv, cassette, basePath, model string
		callID                                      string // "" when the provider sends none (Gemini)
		args                                        string
		output                                      string
		in, out, total                              int64
	}{
		{
			provider: "openai", keyEnv: "OPENAI_API_KEY", basePath: "/v1", model: "gpt-4o",
			cassette: "fantasy/TestOpenAICommon/openai-gpt-4o/tool.yaml",
			callID:   "call_IUonKM9GCNis5eMRHuusMqoy", args: `{"location":"Florence, Italy"}`,
			output: "The weather in Florence, Italy is currently 40°C.",
			in:     61 + 86, out: 16 + 13, total: 77 + 99,
		},
		{
			provider: "openai-compatible", keyEnv: "GROQ_API_KEY", basePath: "/openai/v1", model: "moonshotai/kimi-k2-instruct-0905",
			cassette: "fantasy/TestOpenAICompatibleCommon/groq-kimi-k2/tool.yaml",
			callID:   "functions.weather:0", args: `{"location":"Florence,Italy"}`,
			output: "The current temperature in Florence, Italy is 40°C.",
			in:     93 + 143, out: 32 + 13, total: 125 + 156,
		},
		{
			provider: "anthropic", keyEnv: "ANTHROPIC_API_KEY", model: "claude-sonnet-4-20250514",
			cassette: "fantasy/TestAnthropicCommon/claude-sonnet-4/tool.yaml",
			callID:   "toolu_01XLb9pzgfLa2EMyqWot6Ezt", args: `{"location":"Florence,Italy"}`,
			output: "The current weather in Florence, Italy is 40°C (104°F). That's quite hot! It would be a good idea to stay hydrated and seek shade or air conditioning if you're planning to be outdoors.",
			in:     394 + 475, out: 66 + 50, total: 394 + 66 + 475 + 50,
		},
		{
			// Gemini counts thinking tokens in totalTokenCount only: output
			// is total - prompt (117 - 54 = 63 on the first turn).
			provider: "gemini", keyEnv: "GEMINI_API_KEY", basePath: "/v1beta", model: "gemini-2.5-flash",
			cassette: "fantasy/TestGoogleCommon/gemini-2.5-flash/tool.yaml",
			args:     `{"location":"Florence,Italy"}`,
			output:   "The weather in Florence, Italy is 40 C.",
			in:       54 + 84, out: 63 + 12, total: 117 + 96,
		},
	}
	for _, tt := range tests {
		t.Run(tt.provider, func(t *testing.T) {
			// The recordings are found from the package directory: read
			// them before newCLIEnv moves into the test's own directory.
			answers := fixturetest.Answers(fixturetest.Cassette(t, tt.cassette))
			e := newCLIEnv(t)
			srv := fixturetest.NewServer(t, answers...)
			defer srv.Close()
			t.Setenv(tt.keyEnv, "test-key-not-secret")

			r := e.mustRun(0, "run", "--provider", tt.provider, "--base-url", srv.URL+tt.basePath,
				"--api-key-env", tt.keyEnv, "--model", tt.model, "--json", "What's the weather in Florence, Italy?")
			got := decodeRunJSON(t, r.stdout)
			if got.Output != tt.output || got.Steps != 2 || got.StopReason != "done" {
				t.Errorf("output %q, steps %d, stop %q", got.Output, got.Steps, got.StopReason)
			}
			if u := got.Usage; u.InputTokens != tt.in || u.OutputTokens != tt.out || u.TotalTokens != tt.total || u.CachedTokens != 0 {
				t.Errorf("usage %+v, want in %d out %d total %d cached 0", u, tt.in, tt.out, tt.total)
			}
			var roles []string
			for _, m := range got.Messages {
				roles = append(roles, m.Role)
			}
			if want := []string{"system", "user", "assistant", "tool", "assistant"}; !slices.Equal(roles, want) {
				t.Fatalf("roles %v, want %v", roles, want)
			}
			var callID, callName string
			var callArgs json.RawMessage
			for _, p := range got.Messages[2].Parts {
				if p.ToolCall != nil {
					callID, callName, callArgs = p.ToolCall.ID, p.ToolCall.Name, p.ToolCall.Arguments
				}
			}
			if callName != "weather" || (tt.callID != "" && callID != tt.callID) || callID == "" {
				t.Errorf("tool call %q id %q, want weather id %q", callName, callID, tt.callID)
			}
			var gotArgs, wantArgs any
			if json.Unmarshal(callArgs, &gotArgs) != nil || json.Unmarshal([]byte(tt.args), &wantArgs) != nil {
				t.Fatalf("arguments %s are not JSON", callArgs)
			}
			if !reflect.DeepEqual(gotArgs, wantArgs) {
				t.Errorf("arguments %s, want %s", callArgs, tt.args)
			}
			res := got.Messages[3].Parts[0].ToolResult
			if res == nil || res.CallID != callID || !res.IsError {
				t.Errorf("tool result %+v: want an error result (no weather tool here) answering %q", res, callID)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Errorf("the provider sent %d requests, want 2", n)
			}
		})
	}
}
