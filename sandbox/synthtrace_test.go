package sandbox_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/sandbox"
	"github.com/autoagent-go/autoagent/synth"
	"github.com/autoagent-go/autoagent/trace"
	"github.com/google/go-cmp/cmp"
)

func TestTraceSynthEvent(t *testing.T) {
	if sandbox.TraceSynth(nil) != nil {
		t.Error("TraceSynth(nil) returned an observer; synth would call it for nothing")
	}
	tr, events := collect()
	observe := sandbox.TraceSynth(tr)
	observe(synth.Event{Stage: synth.StageWrite, Tool: "divide", Language: "javascript", Attempt: 2, Status: synth.StatusOK,
		Detail: "wrote 40 lines", Duration: 950500 * time.Microsecond, Usage: &llm.Usage{InputTokens: 300, OutputTokens: 200, CachedTokens: 5}})
	observe(synth.Event{Stage: synth.StageBuild, Tool: "divide", Language: "go", Status: synth.StatusError, Error: "compile: syntax", SHA256: "cd34"})

	evs := events()
	if len(evs) != 2 || evs[0].Type != "synth_write" || evs[1].Type != "synth_build" {
		t.Fatalf("events %+v", evs)
	}
	want := trace.Synth{Attempt: 2, Status: "ok", Name: "divide", Detail: "wrote 40 lines", DurationMS: 950.5,
		InputTokens: 300, OutputTokens: 200, CachedTokens: 5, Language: "javascript"}
	if diff := cmp.Diff(want, evs[0].Payload); diff != "" {
		t.Errorf("write payload (-want +got):\n%s", diff)
	}
	want = trace.Synth{Status: "error", Name: "divide", Error: "compile: syntax", Language: "go", SHA256: "cd34"}
	if diff := cmp.Diff(want, evs[1].Payload); diff != "" {
		t.Errorf("build payload (-want +got):\n%s", diff)
	}
	// The line keeps the keys it always had: the language and digest
	// under "attrs", the attempt as "step".
	line := `"payload":{"step":2,"status":"ok","name":"divide","content_preview":"wrote 40 lines","duration_ms":950.5,"input_tokens":300,"output_tokens":200,"cached_tokens":5,"attrs":{"language":"javascript"}}}`
	if b, _ := json.Marshal(evs[0]); !strings.HasSuffix(string(b), line) {
		t.Errorf("trace line %s\nwant it to end %s", b, line)
	}
}
