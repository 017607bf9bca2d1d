package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"

	"github.com/autoagent-go/autoagent/internal/httpx"
	"github.com/autoagent-go/autoagent/internal/retry"
	"github.com/autoagent-go/autoagent/llm"
)

const providerName = "gemini"

// Provider speaks the Gemini API (generateContent and
// streamGenerateContent). It is safe for concurrent use; create one per
// configuration and share it, so its HTTP connections are reused.
type Provider struct {
	cfg   config
	retry retry.Policy
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider configured by opts. It fails only for invalid
// options (a malformed BaseURL, a negative limit); a missing API key is
// reported by the first call, naming the environment variable.
func New(opts Options) (*Provider, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, retry: retry.ForRetries(opts.MaxRetries, DefaultMaxRetries, opts.OnRetry)}, nil
}

// Name returns "gemini".
func (p *Provider) Name() string { return providerName }

// Complete sends req to generateContent and returns the whole answer.
// Failures are *llm.ProviderError (retryable ones already retried, with
// Retry-After and RetryInfo honoured), ctx.Err() (wrapped) when ctx ends,
// or an error wrapping [ErrNoAPIKey], [ErrNoModel] or [ErrInvalidRequest]
// when nothing could be sent.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	body, model, err := p.encode(req)
	if err != nil {
		return nil, err
	}
	send := func(ctx context.Context) (*http.Response, error) { return p.post(ctx, model, body, false) }
	return httpx.Complete(ctx, p.retry, providerName, send, func(w *wireResponse, h http.Header) (*llm.Response, error) {
		a := newAssembler(model)
		if _, err := a.add(w, httpx.RequestID(h)); err != nil {
			return nil, err
		}
		_, out := a.result()
		return out, nil
	})
}

// Stream sends req to streamGenerateContent?alt=sse and yields text and
// thought deltas, each function call once complete (Gemini 3 partialArgs
// are assembled first), and a final StreamDone whose Response carries the
// thoughtSignatures and usage. Opening the stream is retried like
// Complete; a stream that breaks after it opened (or stays silent for
// StreamIdleTimeout, or ends without a finishReason) yields one error
// wrapping [llm.ErrIncompleteStream].
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		body, model, err := p.encode(req)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		send := func(ctx context.Context) (*http.Response, error) { return p.post(ctx, model, body, true) }
		err = httpx.Stream(ctx, p.retry, p.cfg.idleTimeout, send, func(ctx context.Context, body io.Reader, h http.Header) {
			readStream(ctx, body, model, httpx.RequestID(h), yield)
		})
		if err != nil {
			yield(llm.StreamEvent{}, err)
		}
	}
}

func (p *Provider) encode(req *llm.Request) ([]byte, string, error) {
	if req == nil {
		return nil, "", fmt.Errorf("%w: nil request", ErrInvalidRequest)
	}
	w, model, err := p.cfg.buildRequest(req)
	if err != nil {
		return nil, "", err
	}
	body, err := json.Marshal(w)
	if err != nil {
		return nil, "", fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	body, err = httpx.MergeJSON(body, p.cfg.extraBody)
	if err != nil {
		return nil, "", err
	}
	return body, model, nil
}

// post sends one attempt. The key travels in the x-goog-api-key header,
// never in the URL. A non-2xx answer comes back as its *llm.ProviderError
// (the shared parser reads Google's error document, RetryInfo included).
func (p *Provider) post(ctx context.Context, model string, body []byte, stream bool) (*http.Response, error) {
	key, err := p.cfg.key()
	if err != nil {
		return nil, err
	}
	endpoint := p.cfg.base + "/models/" + url.PathEscape(model)
	h := http.Header{}
	h.Set("X-Goog-Api-Key", key)
	if stream {
		endpoint += ":streamGenerateContent?alt=sse"
		h.Set("Accept", "text/event-stream")
	} else {
		endpoint += ":generateContent"
	}
	for k, v := range p.cfg.headers {
		h.Set(k, v)
	}
	return httpx.Post(ctx, httpx.Request{
		Provider: providerName,
		Client:   p.cfg.client,
		URL:      endpoint,
		Header:   h,
		Body:     body,
	})
}
