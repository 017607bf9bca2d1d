package fixturetest

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Streamed is what a provider's Stream yielded.
type Streamed struct {
	// Text and Reasoning are the deltas, joined; TextDeltas counts the
	// text events.
	Text, Reasoning string
	TextDeltas      int
	// Calls are the tool-call events' calls, in order.
	Calls []llm.ToolCall
	// Response is the done event's; nil when the stream failed first.
	Response *llm.Response
	// Err is the error that ended the stream, if one did.
	Err error
}

// Drain reads seq to its end and stops t when the stream breaks the event
// contract of llm.Provider's Stream: an event after the done event or
// after an error, a done event without its Response, a tool-call event
// without its ToolCall, an unknown event type, a stream that ends with
// neither done nor an error, or deltas and tool-call events that do not
// add up to the done Response's message. An error from the stream is not
// a failure: it is returned in Err for the test to judge.
func Drain(t testing.TB, seq iter.Seq2[llm.StreamEvent, error]) Streamed {
	t.Helper()
	s, err := drain(seq)
	if err != nil {
		t.Fatalf("fixturetest: %v", err)
	}
	return s
}

// drain is Drain returning the broken rule as an error.
func drain(seq iter.Seq2[llm.StreamEvent, error]) (Streamed, error) {
	var (
		s               Streamed
		text, reasoning strings.Builder
	)
	for ev, err := range seq {
		switch {
		case s.Err != nil:
			return s, fmt.Errorf("stream yielded (%q, %v) after the error %v", ev.Type, err, s.Err)
		case s.Response != nil:
			return s, fmt.Errorf("stream yielded (%q, %v) after the done event", ev.Type, err)
		case err != nil:
			s.Err = err
			continue
		}
		switch ev.Type {
		case llm.StreamText:
			text.WriteString(ev.Text)
			s.TextDeltas++
		case llm.StreamReasoning:
			reasoning.WriteString(ev.Text)
		case llm.StreamToolCall:
			if ev.ToolCall == nil {
				return s, fmt.Errorf("tool-call event without a ToolCall")
			}
			s.Calls = append(s.Calls, *ev.ToolCall)
		case llm.StreamDone:
			if ev.Response == nil {
				return s, fmt.Errorf("done event without a Response")
			}
			s.Response = ev.Response
		default:
			return s, fmt.Errorf("unknown stream event type %q", ev.Type)
		}
	}
	s.Text, s.Reasoning = text.String(), reasoning.String()
	if s.Err != nil {
		return s, nil
	}
	if s.Response == nil {
		return s, fmt.Errorf("stream ended with neither a done event nor an error")
	}
	msg := s.Response.Message
	if s.Text != msg.Text() {
		return s, fmt.Errorf("text deltas %q do not add up to the final text %q", s.Text, msg.Text())
	}
	if s.Reasoning != msg.Reasoning() {
		return s, fmt.Errorf("reasoning deltas %q do not add up to the final reasoning %q", s.Reasoning, msg.Reasoning())
	}
	if diff := cmp.Diff(msg.ToolCalls(), s.Calls, cmpopts.EquateEmpty()); diff != "" {
		return s, fmt.Errorf("tool-call events differ from the final calls (-final +events):\n%s", diff)
	}
	return s, nil
}

// Send runs req through p.Complete or, when stream is set, through
// p.Stream read by [Drain], and stops t on an error. The Streamed is the
// zero value for Complete.
func Send(t testing.TB, p llm.Provider, req *llm.Request, stream bool) (*llm.Response, Streamed) {
	t.Helper()
	if !stream {
		resp, err := p.Complete(context.Background(), req)
		if err != nil {
			t.Fatalf("Complete: %v", err)
		}
		return resp, Streamed{}
	}
	s := Drain(t, p.Stream(context.Background(), req))
	if s.Err != nil {
		t.Fatalf("Stream: %v", s.Err)
	}
	return s.Response, s
}
