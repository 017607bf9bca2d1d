package loop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

// recordRun records a three-step run with parallel calls, an untrusted
// tool and a truncated result, and returns the recording and the result.
func recordRun(t *testing.T, path string, keepSecrets bool) (*loop.Result, *counter) {
	t.Helper()
	weather := &counter{name: "weather", reply: func(args string) (tool.Result, error) { return tool.Text("sunny for " + args), nil }}
	page := &counter{name: "page", flags: tool.Flags{Untrusted: true}, reply: func(string) (tool.Result, error) {
		return tool.Text(strings.Repeat("long page ", 50)), nil
	}}
	p := scripted.New(
		scripted.Turn{ToolCalls: []llm.ToolCall{call("w1", "weather", `{"city":"Oslo"}`), call("w2", "weather", `{"city":"Rome"}`)}, Usage: usage(30, 8)},
		scripted.Turn{ToolCalls: []llm.ToolCall{call("p1", "page", `{"url":"https://example.org"}`)}, Usage: usage(60, 4)},
		scripted.Turn{Text: "Oslo and Rome are sunny.", Usage: usage(90, 9)},
	)
	rec, err := loop.CreateRecording(path, loop.RecordOptions{KeepSecrets: keepSecrets})
	if err != nil {
		t.Fatal(err)
	}
	a := &loop.Agent{Provider: p, Tools: registry(t, weather, page), Recorder: rec, Model: "m-1", Bounds: loop.Bounds{MaxToolResultChars: 300}}
	res, err := a.Run(context.Background(), "Weather in Oslo and Rome?")
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return res, weather
}

func TestReplayOfflineMatchesByteForByte(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	orig, weather := recordRun(t, path, false)
	res, err := loop.Replay(context.Background(), path, loop.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(orig)
	b, _ := json.Marshal(res)
	if !bytes.Equal(a, b) {
		t.Fatalf("replayed result differs:\n%s\n%s", a, b)
	}
	if weather.count() != 2 {
		t.Errorf("offline replay ran tools: %d executions", weather.count())
	}
}

func TestReplayModelOnlyRerunsToolsAndNamesTheDivergingStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	_, _ = recordRun(t, path, false)

	same := &counter{name: "weather", reply: func(args string) (tool.Result, error) { return tool.Text("sunny for " + args), nil }}
	page := &counter{name: "page", flags: tool.Flags{Untrusted: true}, reply: func(string) (tool.Result, error) {
		return tool.Text(strings.Repeat("long page ", 50)), nil
	}}
	if _, err := loop.Replay(context.Background(), path, loop.ReplayOptions{Tools: registry(t, same, page)}); err != nil {
		t.Fatalf("model-only replay with the same tools: %v", err)
	}
	if same.count() != 2 || page.count() != 1 {
		t.Errorf("tools ran %d, %d times", same.count(), page.count())
	}

	// The page changed since the recording: the mismatch names step 2.
	changed := &counter{name: "page", flags: tool.Flags{Untrusted: true}, reply: func(string) (tool.Result, error) { return tool.Text("a different page"), nil }}
	_, err := loop.Replay(context.Background(), path, loop.ReplayOptions{Tools: registry(t, same, changed)})
	var mm *loop.ReplayMismatch
	if !errors.As(err, &mm) || mm.Step != 2 || mm.Kind != "tool" || mm.CallID != "p1" {
		t.Fatalf("err = %v (%+v)", err, mm)
	}
	if !strings.Contains(err.Error(), "replay diverged at step 2 (tool p1)") {
		t.Errorf("message = %v", err)
	}
}

func TestReplayDetectsAChangedRecording(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	_, _ = recordRun(t, path, false)
	data, _ := os.ReadFile(path)

	// Edit the recorded result of the first weather call: offline replay
	// feeds it to the model, and the request of step 2 no longer matches.
	edited := bytes.Replace(data, []byte(`"content":"sunny for {\"city\":\"Oslo\"}"`), []byte(`"content":"rainy in Oslo"`), 1)
	if bytes.Equal(edited, data) {
		t.Fatal("test recording did not contain the expected result")
	}
	p := filepath.Join(dir, "edited.jsonl")
	os.WriteFile(p, edited, 0o600)
	_, err := loop.Replay(context.Background(), p, loop.ReplayOptions{})
	var mm *loop.ReplayMismatch
	if !errors.As(err, &mm) || mm.Step != 2 || mm.Kind != "llm" || !strings.Contains(mm.Detail, "message 3 (tool)") {
		t.Fatalf("err = %v", err)
	}

	// A loop that would make one more model call than recorded.
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	var kept [][]byte
	for _, l := range lines {
		if bytes.Contains(l, []byte(`"kind":"llm"`)) && bytes.Contains(l, []byte(`"step":3`)) {
			continue
		}
		kept = append(kept, l)
	}
	short := filepath.Join(dir, "short.jsonl")
	os.WriteFile(short, bytes.Join(kept, []byte("\n")), 0o600)
	_, err = loop.Replay(context.Background(), short, loop.ReplayOptions{})
	if !errors.As(err, &mm) || mm.Step != 3 || !strings.Contains(mm.Detail, "has 2 model call(s)") {
		t.Fatalf("short recording: %v", err)
	}

	for name, bad := range map[string]string{
		"garbage":  "not json\n",
		"no run":   `{"kind":"llm","run_id":"x","response":{"message":{"role":"assistant","parts":[]}}}` + "\n",
		"bad kind": string(lines[0]) + "\n" + `{"kind":"wat","run_id":"x"}` + "\n",
	} {
		f := filepath.Join(dir, "bad.jsonl")
		os.WriteFile(f, []byte(bad), 0o600)
		if _, err := loop.OpenRecording(f); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestRecordingRedactsSecretsAndStillReplays(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	leaky := &counter{name: "env", reply: func(string) (tool.Result, error) {
		return tool.Text("OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx1234"), nil
	}}
	p := scripted.New(calls(call("e", "env", `{"password":"hunter2hunter2"}`)), text("The key is set."))
	rec, _ := loop.CreateRecording(path, loop.RecordOptions{})
	a := &loop.Agent{Provider: p, Tools: registry(t, leaky), Recorder: rec}
	if _, err := a.Run(context.Background(), "check my env; my token is Bearer abcdefgh12345678"); err != nil {
		t.Fatal(err)
	}
	rec.Close()
	data, _ := os.ReadFile(path)
	for _, secret := range []string{"sk-proj-abcdefghijklmnopqrstuvwx1234", "hunter2hunter2", "abcdefgh12345678"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("recording holds %q", secret)
		}
	}
	res, err := loop.Replay(context.Background(), path, loop.ReplayOptions{})
	if err != nil {
		t.Fatalf("replay of a redacted recording: %v", err)
	}
	if res.Output != "The key is set." {
		t.Errorf("output = %q", res.Output)
	}
}

func TestOfflineReplayKeepsToolFlagsForTheGuards(t *testing.T) {
	// The recorded run read an untrusted page, then the trifecta guard
	// refused the egress call. Offline replay has no real tools: unless the
	// stand-ins carry the recorded flags, the guard lets the call through
	// and the replay diverges (the recording has no execution of it).
	path := filepath.Join(t.TempDir(), "run.jsonl")
	mail := mailTool()
	p := scripted.New(calls(call("f", "fetch", `{}`)), calls(call("m", "mail", `{"to":"evil@example.net"}`)), text("Not sent."))
	rec, err := loop.CreateRecording(path, loop.RecordOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := &loop.Agent{Provider: p, Tools: registry(t, webTool(), mail), Recorder: rec}
	if _, err := a.Run(context.Background(), "go"); err != nil || mail.count() != 0 {
		t.Fatalf("recorded run: %v, mail ran %d times", err, mail.count())
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := loop.Replay(context.Background(), path, loop.ReplayOptions{})
	if err != nil {
		t.Fatalf("offline replay: %v", err)
	}
	if r := toolResults(res.Messages)[1]; !strings.HasPrefix(r.Content, "EgressBlocked: ") || !res.Tainted {
		t.Fatalf("replayed egress call = %+v, tainted %v", r, res.Tainted)
	}
}
