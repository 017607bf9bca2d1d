package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"

	"github.com/autoagent-go/autoagent/internal/httpx"
	"github.com/autoagent-go/autoagent/internal/retry"
	"github.com/autoagent-go/autoagent/llm"
)

const providerName = "anthropic"

// Provider speaks the Anthropic Messages API. It is safe for concurrent
// use; create one per configuration and share it, so its HTTP connections
// are reused.
type Provider struct {
	cfg   config
	retry retry.Policy
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider configured by opts. It fails only for invalid
// options (a malformed BaseURL, a negative or inconsistent limit); a
// missing API key is reported by the first call, naming the environment
// variable.
func New(opts Options) (*Provider, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, retry: retry.ForRetries(opts.MaxRetries, DefaultMaxRetries, opts.OnRetry)}, nil
}

// Name returns "anthropic".
func (p *Provider) Name() string { return providerName }

// Complete sends req and returns the whole answer. Failures are
// *llm.ProviderError (retryable ones already retried: 429, 5xx, 529
// overloaded, dropped connections), ctx.Err() (wrapped) when ctx ends, or
// an error wrapping [ErrNoAPIKey], [ErrNoModel] or [ErrInvalidRequest] when
// nothing could be sent.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	body, err := p.encode(req, false)
	if err != nil {
		return nil, err
	}
	send := func(ctx context.Context) (*http.Response, error) { return p.post(ctx, body, false) }
	answer := answerTool(req)
	return httpx.Complete(ctx, p.retry, providerName, send, func(w *wireResponse, h http.Header) (*llm.Response, error) {
		resp, err := toResponse(w, httpx.RequestID(h))
		return foldResponse(resp, answer), err
	})
}

// Stream sends req with "stream": true and yields text and thinking
// deltas, each tool call when its block stops, and a final StreamDone
// whose Response carries thinking signatures and usage. Opening the stream
// is retried like Complete. A stream that breaks after it opened (or stays
// silent for StreamIdleTimeout) yields one error wrapping
// [llm.ErrIncompleteStream]; a mid-stream error event yields its
// *llm.ProviderError, Retryable for overloaded_error.
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		body, err := p.encode(req, true)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		send := func(ctx context.Context) (*http.Response, error) { return p.post(ctx, body, true) }
		answer := answerTool(req)
		out := yield
		if answer != "" {
			// The answer tool's input streams as text (readStream); the
			// final message is folded alike.
			out = func(ev llm.StreamEvent, err error) bool {
				if ev.Type == llm.StreamDone {
					ev.Response = foldResponse(ev.Response, answer)
				}
				return yield(ev, err)
			}
		}
		err = httpx.Stream(ctx, p.retry, p.cfg.idleTimeout, send, func(ctx context.Context, body io.Reader, h http.Header) {
			readStream(ctx, body, httpx.RequestID(h), answer, out)
		})
		if err != nil {
			yield(llm.StreamEvent{}, err)
		}
	}
}

// encode builds the JSON body for req, with ExtraBody merged in.
func (p *Provider) encode(req *llm.Request, stream bool) ([]byte, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: nil request", ErrInvalidRequest)
	}
	w, err := p.cfg.buildRequest(req, stream)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	return httpx.MergeJSON(body, p.cfg.extraBody)
}

// post sends one attempt; a non-2xx answer comes back as its
// *llm.ProviderError.
func (p *Provider) post(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	key, err := p.cfg.key()
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("X-Api-Key", key)
	h.Set("Anthropic-Version", APIVersion)
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	for k, v := range p.cfg.headers {
		h.Set(k, v)
	}
	return httpx.Post(ctx, httpx.Request{
		Provider: providerName,
		Client:   p.cfg.client,
		URL:      p.cfg.endpoint,
		Header:   h,
		Body:     body,
	})
}
