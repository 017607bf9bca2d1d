package orchestrator_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/orchestrator"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// signup asks name and e-mail together, then age once both are known.
type signup struct {
	name, email string
	age         int
}

func (f *signup) Current() []orchestrator.Step {
	var open []orchestrator.Step
	if f.name == "" {
		open = append(open, orchestrator.Step{ID: "name", Prompt: "the person's name"})
	}
	if f.email == "" {
		open = append(open, orchestrator.Step{ID: "email", Prompt: "an e-mail address", Hint: "name@domain"})
	}
	if len(open) == 0 && f.age == 0 {
		open = append(open, orchestrator.Step{ID: "age", Prompt: "the person's age", Hint: "an integer, 18 to 120"})
	}
	return open
}

func (f *signup) Record(id string, v json.RawMessage) string {
	switch id {
	case "name":
		if json.Unmarshal(v, &f.name) != nil || f.name == "" {
			f.name = ""
			return "a name is text"
		}
	case "email":
		var s string
		if json.Unmarshal(v, &s) != nil || !strings.Contains(s, "@") || !strings.Contains(s[strings.Index(s, "@"):], ".") {
			return "that is not an e-mail address"
		}
		f.email = s
	case "age":
		var n int
		if json.Unmarshal(v, &n) != nil || n < 18 || n > 120 {
			return "the age must be a whole number from 18 to 120"
		}
		f.age = n
	}
	return ""
}

func (f *signup) Done() bool { return f.name != "" && f.email != "" && f.age != 0 }

func collect(t *testing.T, seq func(func(orchestrator.Event, error) bool)) []orchestrator.Event {
	t.Helper()
	var out []orchestrator.Event
	for ev, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func kinds(evs []orchestrator.Event) string {
	var s []string
	for _, e := range evs {
		s = append(s, string(e.Type)+":"+e.Step)
	}
	return strings.Join(s, " ")
}

// Two answers in one utterance, a rejected one asked again, an answer for
// a step that is not open refused without reaching the flow, and the flow
// (not the model) saying when it is done.
func TestOrchestratorGuidedForm(t *testing.T) {
	model := scripted.New(
		scripted.Turn{Text: `{"text":"Hello! What is your name, and your e-mail address?"}`},
		// "I'm Ada, ada@example, 36": the model also answers age, not open yet.
		scripted.Turn{Text: `{"answers":[{"step":"name","value":"Ada"},{"step":"email","value":"ada@example"},{"step":"age","value":36}]}`},
		scripted.Turn{Text: `{"text":"Thanks Ada. That e-mail address looks incomplete: could you give it again?"}`},
		// "ada@example.org, and I'm 36": two answers; age opens after e-mail.
		scripted.Turn{Text: "```json\n{\"answers\":[{\"step\":\"email\",\"value\":\"ada@example.org\"},{\"step\":\"age\",\"value\":36}]}\n```"},
	)
	f := &signup{}
	o := &orchestrator.Orchestrator{Provider: model, Flow: f}
	if evs := collect(t, o.Start(context.Background())); len(evs) != 1 || evs[0].Type != orchestrator.EventText {
		t.Fatalf("start: %+v", evs)
	}
	evs := collect(t, o.Handle(context.Background(), "I'm Ada, ada@example, 36"))
	if got := kinds(evs); got != "recorded:name rejected:email rejected:age text:" {
		t.Fatalf("first utterance: %s", got)
	}
	if evs[1].Reason != "that is not an e-mail address" || !strings.Contains(evs[2].Reason, "not open") || f.age != 0 {
		t.Errorf("rejections: %+v / %+v; age %d", evs[1], evs[2], f.age)
	}
	evs = collect(t, o.Handle(context.Background(), "ada@example.org, and I'm 36"))
	if got := kinds(evs); got != "recorded:email recorded:age done:" {
		t.Fatalf("second utterance: %s", got)
	}
	if !f.Done() || f.email != "ada@example.org" || f.age != 36 {
		t.Errorf("flow %+v", f)
	}
	// The model was told the open steps each time, and what was rejected.
	reqs := model.Requests()
	if sys := reqs[2].Messages[0].Text(); !strings.Contains(sys, `"email"`) || !strings.Contains(sys, "not an e-mail address") {
		t.Errorf("the rephrase request: %s", sys)
	}
	if reqs[1].ResponseFormat == nil || reqs[1].ResponseFormat.Type != "json_schema" {
		t.Errorf("the interpret request asks no JSON: %+v", reqs[1].ResponseFormat)
	}
	// Done: nothing more reaches the model.
	if evs := collect(t, o.Handle(context.Background(), "anything")); kinds(evs) != "done:" || len(model.Requests()) != 4 {
		t.Errorf("after done: %s, %d requests", kinds(evs), len(model.Requests()))
	}
}

// A reply that is not the JSON asked for is an error naming it.
func TestOrchestratorBadModelOutput(t *testing.T) {
	o := &orchestrator.Orchestrator{Provider: scripted.New(scripted.Turn{Text: "Sure! Your name is Ada."}), Flow: &signup{}}
	for _, err := range o.Handle(context.Background(), "I'm Ada") {
		if !errors.Is(err, orchestrator.ErrBadModelOutput) {
			t.Errorf("err = %v", err)
		}
		return
	}
	t.Error("no event")
}
