// Package orchestrator runs a flow the host owns: the host's state machine
// (a Flow) says which steps are open and validates what is recorded; the
// model only interprets what the person says into answers for the open
// steps, and phrases the questions. The model can never skip, reorder or
// close a step: an answer for a step that is not open is rejected, and
// the flow decides when it is done.
//
//	o := &orchestrator.Orchestrator{Provider: model, Flow: form}
//	for ev, err := range o.Start(ctx) { ... }            // the first question
//	for ev, err := range o.Handle(ctx, "I'm Ada, 36") { // recorded, rejected, text, done
//		...
//	}
package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
)

// Step is one open question of a flow.
type Step struct {
	// ID names the step; answers refer to it.
	ID string `json:"id"`
	// Prompt is what the host needs to know, for the model to phrase.
	Prompt string `json:"prompt"`
	// Hint, optional, tells the model the form of the value ("an integer
	// between 18 and 120", "an e-mail address").
	Hint string `json:"hint,omitempty"`
}

// Flow is the host's state machine. Its methods are called from one
// goroutine at a time.
type Flow interface {
	// Current returns the steps open now, in the order to ask them.
	Current() []Step
	// Record validates and stores value for the open step id. It returns
	// "" when accepted, else the reason it is not (said to the person).
	Record(id string, value json.RawMessage) string
	// Done reports whether the flow is complete.
	Done() bool
}

// EventType says what an Event is.
type EventType string

// The events.
const (
	// EventText is what to say to the person (a question, a reprompt).
	EventText EventType = "text"
	// EventRecorded is an answer the flow accepted.
	EventRecorded EventType = "recorded"
	// EventRejected is an answer the flow refused, or one for a step that
	// is not open; Reason says why.
	EventRejected EventType = "rejected"
	// EventDone ends the flow.
	EventDone EventType = "done"
)

// Event is one thing that happened while handling an utterance.
type Event struct {
	Type   EventType       `json:"type"`
	Text   string          `json:"text,omitempty"`
	Step   string          `json:"step,omitempty"`
	Value  json.RawMessage `json:"value,omitempty"`
	Reason string          `json:"reason,omitempty"`
}

// Orchestrator drives a Flow with a model. The zero value of every field
// but Provider and Flow works.
type Orchestrator struct {
	Provider llm.Provider
	Flow     Flow
	// Model overrides the provider's model; System is prepended to the
	// orchestrator's own instructions (a persona, a language).
	Model  string
	System string

	history []llm.Message // what the person said and was told
}

// ErrBadModelOutput is wrapped by the error of a model reply that is not
// the JSON the orchestrator asked for.
var ErrBadModelOutput = errors.New("orchestrator: the model's reply is not the JSON asked for")

const interpretInstructions = `You help a person fill in a form that the host controls. Read the person's last message and extract answers ONLY for the open steps listed below, as JSON: {"answers":[{"step":"<id>","value":<JSON value>}]}. Give an answer only for what the person actually said; give none when they did not answer. Never invent steps.`

const phraseInstructions = `You help a person fill in a form that the host controls. Write, in one short message to the person, what the host needs next: acknowledge what was recorded, explain any rejection with its reason, and ask for the open steps listed below, in that order. Reply as JSON: {"text":"<your message>"}. If no step is open, thank the person.`

var (
	interpretSchema = json.RawMessage(`{"type":"object","properties":{"answers":{"type":"array","items":{"type":"object","properties":{"step":{"type":"string"},"value":{}},"required":["step","value"]}}},"required":["answers"]}`)
	phraseSchema    = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)
)

// Start phrases the first question (or reports done for a flow done
// already).
func (o *Orchestrator) Start(ctx context.Context) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if o.Flow.Done() {
			yield(Event{Type: EventDone}, nil)
			return
		}
		ev, err := o.phrase(ctx, nil)
		yield(ev, err)
	}
}

// Handle interprets an utterance: each answer the model finds goes to the
// flow (recorded or rejected; an answer for a step that is not open is
// rejected without reaching the flow), then the next question is phrased,
// or the flow is done.
func (o *Orchestrator) Handle(ctx context.Context, utterance string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if o.Flow.Done() {
			yield(Event{Type: EventDone}, nil)
			return
		}
		o.history = append(o.history, llm.UserText(utterance))
		answers, err := o.interpret(ctx)
		if err != nil {
			yield(Event{}, err)
			return
		}
		var outcome []Event
		for _, a := range answers {
			open := slices.ContainsFunc(o.Flow.Current(), func(s Step) bool { return s.ID == a.Step })
			ev := Event{Type: EventRecorded, Step: a.Step, Value: a.Value}
			switch {
			case !open:
				ev.Type, ev.Reason = EventRejected, fmt.Sprintf("step %q is not open now", a.Step)
			default:
				if reason := o.Flow.Record(a.Step, a.Value); reason != "" {
					ev.Type, ev.Reason = EventRejected, reason
				}
			}
			outcome = append(outcome, ev)
			if !yield(ev, nil) {
				return
			}
		}
		if o.Flow.Done() {
			yield(Event{Type: EventDone}, nil)
			return
		}
		ev, err := o.phrase(ctx, outcome)
		yield(ev, err)
	}
}

type answer struct {
	Step  string          `json:"step"`
	Value json.RawMessage `json:"value"`
}

// interpret asks the model for the answers of the last utterance.
func (o *Orchestrator) interpret(ctx context.Context) ([]answer, error) {
	steps, _ := json.Marshal(o.Flow.Current())
	sys := strings.TrimSpace(o.System + "\n\n" + interpretInstructions + "\n\nOpen steps: " + string(steps))
	msgs := append([]llm.Message{llm.SystemText(sys)}, o.history...)
	var out struct {
		Answers []answer `json:"answers"`
	}
	if err := o.ask(ctx, msgs, "answers", interpretSchema, &out); err != nil {
		return nil, err
	}
	return out.Answers, nil
}

// phrase asks the model for the next message to the person.
func (o *Orchestrator) phrase(ctx context.Context, outcome []Event) (Event, error) {
	steps, _ := json.Marshal(o.Flow.Current())
	done, _ := json.Marshal(outcome)
	sys := strings.TrimSpace(o.System + "\n\n" + phraseInstructions + "\n\nOpen steps: " + string(steps) + "\n\nWhat the host did with the last answers: " + string(done))
	msgs := append([]llm.Message{llm.SystemText(sys)}, o.history...)
	var out struct {
		Text string `json:"text"`
	}
	if err := o.ask(ctx, msgs, "message", phraseSchema, &out); err != nil {
		return Event{}, err
	}
	o.history = append(o.history, llm.AssistantText(out.Text))
	return Event{Type: EventText, Text: out.Text}, nil
}

// ask calls the model for JSON of schema and decodes it into v.
func (o *Orchestrator) ask(ctx context.Context, msgs []llm.Message, name string, schema json.RawMessage, v any) error {
	resp, err := o.Provider.Complete(ctx, &llm.Request{
		Model: o.Model, Messages: msgs,
		ResponseFormat: &llm.ResponseFormat{Type: "json_schema", Name: name, Schema: schema},
	})
	if err != nil {
		return err
	}
	text := strings.TrimSpace(resp.Message.Text())
	text = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```"), "```")
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), v); err != nil {
		return fmt.Errorf("%w: %v: %.200q", ErrBadModelOutput, err, text)
	}
	return nil
}
