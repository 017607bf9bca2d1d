package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"

	"github.com/autoagent-go/autoagent/internal/retry"
	"github.com/autoagent-go/autoagent/llm"
)

const providerName = "gemini"

// maxResponseBody bounds a non-streamed answer.
const maxResponseBody = 64 << 20

// Provider speaks the Gemini API (generateContent and
// streamGenerateContent). It is safe for concurrent use; create one per
// configuration and share it.
type Provider struct {
	cfg   config
	retry retry.Policy
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider configured by opts. It fails with [ErrNoAPIKey]
// when no key is given or found in the environment.
func New(opts Options) (*Provider, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, retry: retry.Policy{MaxAttempts: cfg.maxAttempts}}, nil
}

// Name returns "gemini".
func (p *Provider) Name() string { return providerName }

// Complete sends req to generateContent and returns the whole answer.
// Failures are *llm.ProviderError (retryable ones already retried, with
// RetryInfo honoured), ctx.Err() (wrapped) when ctx ends, or an error
// wrapping [ErrInvalidRequest] or [ErrNoModel] when req cannot be sent.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	body, model, err := p.encode(req)
	if err != nil {
		return nil, err
	}
	var out *llm.Response
	err = p.retry.Do(ctx, func(ctx context.Context) error {
		resp, err := p.post(ctx, model, body, false)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
		if err != nil {
			return transportError(ctx, err)
		}
		var w wireResponse
		if err := json.Unmarshal(data, &w); err != nil {
			return &llm.ProviderError{Provider: providerName, Message: "response is not valid JSON: " + truncate(string(data), 200), Err: err}
		}
		a := newAssembler(model)
		if _, err := a.add(&w); err != nil {
			return err
		}
		_, out = a.result()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Stream sends req to streamGenerateContent?alt=sse and yields text and
// thought deltas, each function call once complete (Gemini 3 partialArgs
// are assembled first), and a final StreamDone whose Response carries the
// thoughtSignatures and usage. Opening the stream is retried like
// Complete; a stream that breaks after it opened yields an error wrapping
// [llm.ErrIncompleteStream].
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		body, model, err := p.encode(req)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		var resp *http.Response
		err = p.retry.Do(ctx, func(ctx context.Context) error {
			var err error
			resp, err = p.post(ctx, model, body, true)
			return err
		})
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		defer resp.Body.Close()
		readStream(resp.Body, model, resp.Header.Get("X-Request-Id"), func(ev llm.StreamEvent, err error) bool {
			if err != nil && ctx.Err() != nil {
				err = fmt.Errorf("gemini: stream cancelled: %w", context.Cause(ctx))
			}
			return yield(ev, err)
		})
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
	if len(p.cfg.extraBody) > 0 {
		body, err = mergeBody(body, p.cfg.extraBody)
		if err != nil {
			return nil, "", err
		}
	}
	return body, model, nil
}

// post sends one attempt. The key travels in the x-goog-api-key header,
// never in the URL. A non-2xx answer is returned as its
// *llm.ProviderError, with the body closed.
func (p *Provider) post(ctx context.Context, model string, body []byte, stream bool) (*http.Response, error) {
	endpoint := p.cfg.base + "/models/" + url.PathEscape(model)
	if stream {
		endpoint += ":streamGenerateContent?alt=sse"
	} else {
		endpoint += ":generateContent"
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("gemini: building request: %w", err)
	}
	h := hreq.Header
	h.Set("Content-Type", "application/json")
	h.Set("X-Goog-Api-Key", p.cfg.apiKey)
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	for k, v := range p.cfg.headers {
		h.Set(k, v)
	}
	resp, err := p.cfg.client.Do(hreq)
	if err != nil {
		return nil, transportError(ctx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, errorFromResponse(resp)
	}
	return resp, nil
}

// transportError wraps a failure to reach the server or read its answer:
// retryable, unless ctx ended, in which case the caller gets the context's
// error.
func transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("gemini: %w", errors.Join(context.Cause(ctx), err))
	}
	return &llm.ProviderError{Provider: providerName, Message: err.Error(), Retryable: true, Err: err}
}
