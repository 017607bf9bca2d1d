package synth

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/tool"
)

const wordCountJS = `function run(args) {
  const words = args.text.split(/\s+/).filter(Boolean);
  return { words: words.length };
}`

var wordCountSchema = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)

func TestBuildRunsEveryStepAndTheToolWorks(t *testing.T) {
	w := scripted.New(turn(draft{
		Name: "Word Count!", Description: "Counts words.", InputSchema: wordCountSchema, Source: wordCountJS,
		SelfTests: []map[string]any{{"args": map[string]any{"text": "a b  c"}, "expect": map[string]any{"words": 3.0}}},
	}))
	var ev events
	b := newBuilder(t, w, func(o *Options) { o.Observer = ev.observe })
	ctx := context.Background()
	tl, err := b.Build(ctx, Request{Capability: "count words"})
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	if tl.Name() != "word_count" || tl.Language() != "js" || len(tl.Grants()) != 0 {
		t.Fatalf("tool %s %s %v", tl.Name(), tl.Language(), tl.Grants())
	}
	res, err := tl.Call(ctx, tool.Call{Name: "word_count", Arguments: json.RawMessage(`{"text":"one two three four"}`)})
	if err != nil || res.IsError || res.Text() != `{"words":4}` || string(res.StructuredContent) != `{"words":4}` {
		t.Fatalf("call: %+v %v", res, err)
	}
	res, _ = tl.Call(ctx, tool.Call{Name: "word_count", Arguments: json.RawMessage(`{"txt":"x"}`)})
	if !res.IsError {
		t.Fatalf("arguments outside the schema were accepted: %+v", res)
	}
	want := []string{"write:ok", "screen:ok", "build:ok", "load:ok", "self_test:ok"}
	if diff := cmp.Diff(want, ev.stages()); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
	req := w.Requests()[0]
	if req.ResponseFormat == nil || req.ResponseFormat.Type != "json_schema" || !strings.Contains(requestText(req), "function run(args)") {
		t.Fatalf("writer request lacks the structured format or the JavaScript guide: %+v", req.ResponseFormat)
	}
}

func TestBuildRefusals(t *testing.T) {
	cases := []struct {
		name  string
		draft draft
		stage Stage
		want  string
	}{
		{"syntax error", draft{Name: "t", Source: "function run(a) { return a. }"}, StageBuild, "does not compile"},
		{"no run", draft{Name: "t", Source: "const x = 1; // run("}, StageScreen, "must define a top-level function run"},
		{"throws at load", draft{Name: "t", Source: "throw new Error('top'); function run() {}"}, StageBuild, "failed while loading: Error: top"},
		{"self-test fails", draft{Name: "t", Source: "function run() { return 2 }", SelfTests: []map[string]any{{"args": map[string]any{}, "expect": 3}}}, StageSelfTest, "self-test 1 failed: args {}: expected 3, got 2"},
		{"self-test contains", draft{Name: "t", Source: "function run() { return 'abc' }", SelfTests: []map[string]any{{"args": map[string]any{}, "expect_contains": "zz"}}}, StageSelfTest, `"zz" not in "abc"`},
		{"self-test throws", draft{Name: "t", Source: "function run() { throw new Error('nope') }", SelfTests: []map[string]any{{"args": map[string]any{}, "expect": 1}}}, StageSelfTest, "run threw: Error: nope"},
		{"bad schema", draft{Name: "t", InputSchema: json.RawMessage(`{"type":"object","required":"a"}`), Source: "function run() { return 1 }"}, StageScreen, "input_schema is not a valid JSON Schema"},
		{"not an object schema", draft{Name: "t", InputSchema: json.RawMessage(`{"type":"string"}`), Source: "function run() { return 1 }"}, StageScreen, `must have "type": "object"`},
		{"reserved name", draft{Name: "create_tool", Source: "function run() { return 1 }"}, StageScreen, "already exists"},
		{"empty name", draft{Name: "!!!", Source: "function run() { return 1 }"}, StageScreen, "empty or invalid"},
		{"too big", draft{Name: "t", Source: "function run() { return 1 }//" + strings.Repeat("x", DefaultMaxSource)}, StageScreen, "more than the"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBuilder(t, scripted.New(turn(c.draft)), nil)
			_, err := b.Build(context.Background(), Request{Capability: "x"})
			var rej *RejectError
			if !errors.As(err, &rej) {
				t.Fatalf("err %v, want a *RejectError", err)
			}
			if rej.Stage != c.stage || !strings.Contains(rej.Reason, c.want) {
				t.Fatalf("refused at %s: %q; want %s containing %q", rej.Stage, rej.Reason, c.stage, c.want)
			}
		})
	}
}

func TestBuildUnreadableAnswerIsRefused(t *testing.T) {
	b := newBuilder(t, scripted.New(scripted.Turn{Text: "I cannot do that."}), nil)
	_, err := b.Build(context.Background(), Request{Capability: "x"})
	var rej *RejectError
	if !errors.As(err, &rej) || rej.Stage != StageWrite || !strings.Contains(rej.Reason, "no JSON object") {
		t.Fatalf("err %v", err)
	}
}

func TestBuildWriterFailureIsAnError(t *testing.T) {
	boom := errors.New("provider down")
	b := newBuilder(t, scripted.New(scripted.Turn{Err: boom}), nil)
	_, err := b.Build(context.Background(), Request{Capability: "x"})
	var rej *RejectError
	if !errors.Is(err, boom) || errors.As(err, &rej) {
		t.Fatalf("err %v, want the provider's error, not a refusal", err)
	}
}

func TestGrantsAboveTheCeilingAreRefused(t *testing.T) {
	src := "function run() { return 1 }"
	cases := []struct {
		name      string
		ceiling   []string
		requested []string
		refused   []string
	}{
		{"no ceiling", nil, []string{"net:api.example.com"}, []string{"net:api.example.com"}},
		{"other host", []string{"net:*.example.com"}, []string{"net:evil.test"}, []string{"net:evil.test"}},
		{"env beyond net", []string{"net:*.example.com"}, []string{"net:api.example.com", "env:HOME"}, []string{"env:HOME"}},
		{"write beyond read", []string{"fs.read:/tmp"}, []string{"fs.write:/tmp"}, []string{"fs.write:/tmp"}},
		{"within", []string{"net:*.example.com", "clock"}, []string{"net:api.example.com", "clock"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ceiling, err := manifestGrants(c.ceiling)
			if err != nil {
				t.Fatal(err)
			}
			b := newBuilder(t, scripted.New(turn(draft{Name: "t", Source: src, Capabilities: c.requested})), func(o *Options) { o.Ceiling = ceiling })
			tl, err := b.Build(context.Background(), Request{Capability: "x"})
			if c.refused == nil {
				if err != nil {
					t.Fatalf("Build: %v", err)
				}
				if got := grantList(tl.Grants()); got != "net:api.example.com, clock" {
					t.Fatalf("grants %s", got)
				}
				return
			}
			var ge *GrantError
			if !errors.As(err, &ge) {
				t.Fatalf("err %v, want a *GrantError", err)
			}
			if diff := cmp.Diff(c.refused, ge.Requested); diff != "" {
				t.Fatalf("refused grants (-want +got):\n%s", diff)
			}
			if !strings.Contains(err.Error(), "beyond what this host allows") {
				t.Fatalf("message %q", err)
			}
		})
	}
}

func TestMissingEngineIsAClearError(t *testing.T) {
	b := newBuilder(t, scripted.New(turn(draft{Name: "t", Source: "function run() { return 1 }"})), func(o *Options) {
		o.Backends = []Backend{&JavaScript{Engine: filepath.Join(t.TempDir(), "jsengine.wasm")}}
	})
	_, err := b.Build(context.Background(), Request{Capability: "x"})
	if !errors.Is(err, ErrNoEngine) || !strings.Contains(err.Error(), "make synth-engine") {
		t.Fatalf("err %v", err)
	}
}
