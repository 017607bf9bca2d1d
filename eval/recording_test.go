package eval_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/eval"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// record runs a scripted agent that looks an order up and answers, with a
// recorder, and returns the recording's path.
func record(t *testing.T) string {
	t.Helper()
	lookup, err := tool.New("lookup", "Look an order up.", func(_ context.Context, in struct {
		ID int `json:"id"`
	}) (string, error) {
		return `{"status":"shipped"}`, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	reg := &tool.Registry{}
	if err := reg.Add(lookup); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	a := &loop.Agent{
		Provider: scripted.New(
			scripted.Turn{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "lookup", Arguments: json.RawMessage(`{"id":7}`)}}, Usage: &llm.Usage{InputTokens: 40, OutputTokens: 6}},
			scripted.Turn{Text: "Order 7 has shipped.", Usage: &llm.Usage{InputTokens: 55, OutputTokens: 7}},
		),
		Tools:    reg,
		Recorder: loop.NewRecorder(&buf, loop.RecordOptions{}),
	}
	if _, err := a.Run(context.Background(), "Where is order 7?"); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "order-7.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A recording becomes a case that replays offline and passes; an edited
// recording (the answer changed) is a failing run naming the divergence.
func TestFromRecording(t *testing.T) {
	path := record(t)
	c, err := eval.FromRecording(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "order-7" || c.Prompt != "Where is order 7?" || c.Expect.OutputEquals == nil || *c.Expect.OutputEquals != "Order 7 has shipped." ||
		strings.Join(c.Expect.ToolOrder, ",") != "lookup" || c.Expect.StopReason != loop.StopDone {
		t.Fatalf("case %+v", c)
	}
	rep, err := eval.RunK(context.Background(), nil, []eval.Case{c}, eval.Options{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	if rep.PassHatK != 1 || rep.TokensPerSuccess == nil || *rep.TokensPerSuccess != 108 {
		t.Errorf("pass^3 %v, tokens per success %v; want 1 and 108 (the recorded usage)", rep.PassHatK, rep.TokensPerSuccess)
	}

	// The model's recorded answer edited: the replay still plays it, but
	// the transcript no longer matches the recorded end.
	b, _ := os.ReadFile(path)
	edited := filepath.Join(t.TempDir(), "edited.jsonl")
	if err := os.WriteFile(edited, bytes.Replace(b, []byte(`"text":"Order 7 has shipped."`), []byte(`"text":"Order 7 is lost."`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err = eval.FromRecording(edited)
	if err != nil {
		t.Fatal(err)
	}
	rep, err = eval.RunK(context.Background(), nil, []eval.Case{c}, eval.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Cases[0].Failures; rep.Cases[0].Passes != 0 || len(f) != 1 || !strings.Contains(f[0].Reason, "replay diverged") {
		t.Errorf("edited recording: %d passes, failures %+v; want a failure naming the divergence", rep.Cases[0].Passes, f)
	}

	// A recording cut before its end has no outcome to hold a replay to.
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(cut, bytes.Join(lines[:len(lines)-1], []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := eval.FromRecording(cut); err == nil || !strings.Contains(err.Error(), "never ended") {
		t.Errorf("a cut recording: %v", err)
	}
}
