// Package routing is an [llm.Provider] that sends each request to one of
// several providers: by default, turns whose latest user message holds an
// image go to a vision model and the rest to a cheaper text model.
//
//	text, _ := openai.DeepSeek(openai.Options{Model: "deepseek-chat"})
//	vision, _ := openai.New(openai.Options{Model: "gpt-4o"})
//	p, err := routing.New(routing.Options{Default: text, Vision: vision})
//	if err != nil {
//		log.Fatal(err)
//	}
//	agent := &loop.Agent{Provider: p} // screenshots go to gpt-4o, the rest to DeepSeek
//
// # Choosing
//
// Without Options.Router, a request goes to Vision when its latest user
// message has an image part and Vision is set, and to Default otherwise
// (with no Vision configured, image turns go to Default unchanged, since
// it is the only model there is). A Router replaces that rule.
//
// # Stripping images
//
// Past image parts (earlier turns that had images) would make a text-only
// model fail, so when the chosen provider is not Vision, the request sent
// is a copy whose messages have no image parts; every other part and field
// is kept, and the caller's request is never modified. Options.KeepImages
// turns this off (for a Default that also reads images).
//
// Streaming goes to the chosen provider's Stream, so native streaming is
// preserved.
package routing

import (
	"context"
	"errors"
	"iter"

	"github.com/autoagent-go/autoagent/llm"
)

// ErrNoProvider is returned by [New] without a Default, and by a call whose
// Router returned nil.
var ErrNoProvider = errors.New("routing: no provider")

// Options configures a [Provider].
type Options struct {
	// Default answers every request the rule does not send to Vision.
	// Required.
	Default llm.Provider
	// Vision answers turns whose latest user message has an image.
	Vision llm.Provider
	// Router, when set, chooses the provider for each request instead of
	// the image rule. It must not modify the request and must be safe for
	// concurrent use.
	Router func(req *llm.Request) llm.Provider
	// KeepImages sends image parts to a non-vision choice unchanged.
	KeepImages bool
}

// Provider routes requests. It is safe for concurrent use when the
// providers it routes to are.
type Provider struct {
	opts Options
}

var _ llm.Provider = (*Provider)(nil)

// New returns a routing Provider.
func New(opts Options) (*Provider, error) {
	if opts.Default == nil {
		return nil, errors.Join(ErrNoProvider, errors.New("routing: Options.Default is required"))
	}
	return &Provider{opts: opts}, nil
}

// Name returns "routing".
func (p *Provider) Name() string { return "routing" }

// Route returns the provider req goes to and the request it is sent, with
// images stripped when the choice is not the vision provider.
func (p *Provider) Route(req *llm.Request) (llm.Provider, *llm.Request, error) {
	var chosen llm.Provider
	switch {
	case p.opts.Router != nil:
		chosen = p.opts.Router(req)
		if chosen == nil {
			return nil, nil, errors.Join(ErrNoProvider, errors.New("routing: the Router returned nil"))
		}
	case p.opts.Vision != nil && latestUserHasImage(req.Messages):
		chosen = p.opts.Vision
	default:
		chosen = p.opts.Default
	}
	if chosen == p.opts.Vision || p.opts.KeepImages || !anyImage(req.Messages) {
		return chosen, req, nil
	}
	return chosen, withoutImages(req), nil
}

// Complete sends req to the chosen provider.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	to, r, err := p.Route(req)
	if err != nil {
		return nil, err
	}
	return to.Complete(ctx, r)
}

// Stream streams req from the chosen provider.
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	to, r, err := p.Route(req)
	if err != nil {
		return func(yield func(llm.StreamEvent, error) bool) { yield(llm.StreamEvent{}, err) }
	}
	return to.Stream(ctx, r)
}

func latestUserHasImage(msgs []llm.Message) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleUser {
			return msgs[i].HasImages()
		}
	}
	return false
}

func anyImage(msgs []llm.Message) bool {
	for _, m := range msgs {
		if m.HasImages() {
			return true
		}
	}
	return false
}

// withoutImages copies req with its image parts removed. Only the messages
// that held images are rebuilt; the others share their parts, which
// providers treat as read-only.
func withoutImages(req *llm.Request) *llm.Request {
	out := *req
	out.Messages = make([]llm.Message, len(req.Messages))
	for i, m := range req.Messages {
		if !m.HasImages() {
			out.Messages[i] = m
			continue
		}
		parts := make([]llm.Part, 0, len(m.Parts))
		for _, part := range m.Parts {
			if part.Type != llm.PartImage {
				parts = append(parts, part)
			}
		}
		m.Parts = parts
		out.Messages[i] = m
	}
	return &out
}
