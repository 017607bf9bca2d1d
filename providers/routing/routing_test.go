package routing

import (
	"context"
	"errors"
	"iter"
	"reflect"
	"sync"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/llm"
)

// fake records the requests it gets and answers with its name.
type fake struct {
	name string
	mu   sync.Mutex
	got  []*llm.Request
}

var _ llm.Provider = (*fake)(nil)

func (f *fake) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	f.mu.Lock()
	f.got = append(f.got, req)
	f.mu.Unlock()
	return &llm.Response{Message: llm.AssistantText(f.name)}, nil
}

// Stream is native: two deltas then done, so the test can tell it from
// llm.StreamFromComplete's single delta.
func (f *fake) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		f.mu.Lock()
		f.got = append(f.got, req)
		f.mu.Unlock()
		if !yield(llm.StreamEvent{Type: llm.StreamText, Text: f.name[:1]}, nil) {
			return
		}
		if !yield(llm.StreamEvent{Type: llm.StreamText, Text: f.name[1:]}, nil) {
			return
		}
		yield(llm.StreamEvent{Type: llm.StreamDone, Response: &llm.Response{Message: llm.AssistantText(f.name)}}, nil)
	}
}

var png = []byte("\x89PNG\r\n\x1a\nfake")

func imageTurn(text string) llm.Message {
	return llm.Message{Role: llm.RoleUser, Parts: []llm.Part{llm.TextPart(text), llm.ImagePart("image/png", png)}}
}

func TestRoute(t *testing.T) {
	temp := 0.3
	withPastImage := &llm.Request{
		Model:       "m",
		Temperature: &temp,
		Tools:       []llm.ToolSpec{{Name: "t"}},
		Messages: []llm.Message{
			llm.SystemText("sys"),
			imageTurn("what is in this picture?"),
			llm.AssistantText("a cat"),
			llm.UserText("and how old is it?"),
		},
	}
	imageNow := &llm.Request{Messages: []llm.Message{llm.UserText("hi"), llm.AssistantText("hello"), imageTurn("look")}}
	// The rule looks at the latest user message only.
	imageLatestIsOld := &llm.Request{Messages: []llm.Message{imageTurn("look"), llm.AssistantText("ok"), llm.UserText("thanks")}}

	tests := []struct {
		name       string
		vision     bool
		keep       bool
		req        *llm.Request
		wantVision bool
		wantImages bool
	}{
		{"text turn goes to default", true, false, &llm.Request{Messages: []llm.Message{llm.UserText("hi")}}, false, false},
		{"image turn goes to vision with its images", true, false, imageNow, true, true},
		{"past images stripped for default", true, false, withPastImage, false, false},
		{"latest user message decides", true, false, imageLatestIsOld, false, false},
		{"no vision: default, images stripped", false, false, imageNow, false, false},
		{"KeepImages keeps them for default", true, true, withPastImage, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def, vis := &fake{name: "default"}, &fake{name: "vision"}
			opts := Options{Default: def, KeepImages: tt.keep}
			if tt.vision {
				opts.Vision = vis
			}
			p, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			before := cloneRequest(tt.req)
			resp, err := p.Complete(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			want := "default"
			if tt.wantVision {
				want = "vision"
			}
			if resp.Message.Text() != want {
				t.Fatalf("answered by %s, want %s", resp.Message.Text(), want)
			}
			if !reflect.DeepEqual(before, tt.req) {
				t.Errorf("the caller's request was modified")
			}
			chosen := def
			if tt.wantVision {
				chosen = vis
			}
			sent := chosen.got[0]
			if got := hasImage(sent); got != tt.wantImages {
				t.Errorf("sent request has images = %v, want %v", got, tt.wantImages)
			}
			// Everything but the image parts is preserved.
			if sent.Model != tt.req.Model || sent.Temperature != tt.req.Temperature || !reflect.DeepEqual(sent.Tools, tt.req.Tools) || len(sent.Messages) != len(tt.req.Messages) {
				t.Errorf("sent request lost fields: %+v", sent)
			}
			for i, m := range sent.Messages {
				if m.Role != tt.req.Messages[i].Role || m.Text() != tt.req.Messages[i].Text() {
					t.Errorf("message %d changed: %+v", i, m)
				}
			}
		})
	}
}

func hasImage(r *llm.Request) bool {
	for _, m := range r.Messages {
		if m.HasImages() {
			return true
		}
	}
	return false
}

func cloneRequest(r *llm.Request) *llm.Request {
	c := *r
	c.Messages = nil
	for _, m := range r.Messages {
		c.Messages = append(c.Messages, m.Clone())
	}
	return &c
}

func TestRouter(t *testing.T) {
	a, b := &fake{name: "aa"}, &fake{name: "bb"}
	p, _ := New(Options{Default: a, Router: func(req *llm.Request) llm.Provider {
		if req.Model == "big" {
			return b
		}
		return a
	}})
	resp, err := p.Complete(context.Background(), &llm.Request{Model: "big"})
	if err != nil || resp.Message.Text() != "bb" {
		t.Fatalf("resp = %v, err = %v", resp, err)
	}
	p, _ = New(Options{Default: a, Router: func(*llm.Request) llm.Provider { return nil }})
	if _, err := p.Complete(context.Background(), &llm.Request{}); !errors.Is(err, ErrNoProvider) {
		t.Fatalf("nil router choice: err = %v", err)
	}
	if s := fixturetest.Drain(t, p.Stream(context.Background(), &llm.Request{})); !errors.Is(s.Err, ErrNoProvider) {
		t.Fatalf("nil router choice in Stream: err = %v", s.Err)
	}
}

func TestStreamIsNative(t *testing.T) {
	def, vis := &fake{name: "default"}, &fake{name: "vision"}
	p, _ := New(Options{Default: def, Vision: vis})
	var deltas []string
	for ev, err := range p.Stream(context.Background(), &llm.Request{Messages: []llm.Message{imageTurn("x")}}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.StreamText {
			deltas = append(deltas, ev.Text)
		}
	}
	if !reflect.DeepEqual(deltas, []string{"v", "ision"}) {
		t.Fatalf("deltas = %q, want the vision provider's own two deltas", deltas)
	}
}

func TestNewRequiresDefault(t *testing.T) {
	if _, err := New(Options{Vision: &fake{name: "v"}}); !errors.Is(err, ErrNoProvider) {
		t.Fatalf("err = %v", err)
	}
}
