package eval

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/loop"
)

// FromRecording turns a run recorded with run --record (a [loop.Recorder]
// file) into a regression case: every run of it replays the recording
// offline (no provider, no tool runs; the replay itself fails on any
// divergence from the recorded requests, calls and transcript), and it
// must end as the recording did: the same stop reason, the same answer,
// the same tool calls in the same order. Its id is the file's name
// without the extension.
func FromRecording(path string) (Case, error) {
	rec, err := loop.OpenRecording(path)
	if err != nil {
		return Case{}, err
	}
	out := rec.Outcome()
	if !out.Ended {
		return Case{}, fmt.Errorf("%s: the recorded run never ended (the process stopped mid-run): there is no outcome to hold a replay to", path)
	}
	c := Case{
		ID:        strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)),
		Recording: rec,
		Expect:    Expect{StopReason: out.StopReason},
	}
	st := rec.State()
	for i := len(st.Messages) - 1; i >= 0; i-- {
		if st.Messages[i].Role == llm.RoleUser {
			c.Prompt = st.Messages[i].Text()
			break
		}
	}
	if out.StopReason == loop.StopDone {
		c.Expect.OutputEquals = &out.Output
	}
	c.Expect.ToolOrder = out.ToolCalls
	return c, nil
}
