package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"

	"github.com/autoagent-go/autoagent/internal/retry"
	"github.com/autoagent-go/autoagent/llm"
)

const providerName = "anthropic"

// maxResponseBody bounds a non-streamed answer: far above any real one,
// low enough that a broken server cannot exhaust memory.
const maxResponseBody = 64 << 20

// Provider speaks the Anthropic Messages API. It is safe for concurrent
// use; create one per configuration and share it.
type Provider struct {
	cfg   config
	retry retry.Policy
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider configured by opts. It fails with [ErrNoAPIKey]
// when no key is given or found in the environment, and with
// [ErrInvalidRequest] for inconsistent limits.
func New(opts Options) (*Provider, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, retry: retry.Policy{MaxAttempts: cfg.maxAttempts}}, nil
}

// Name returns "anthropic".
func (p *Provider) Name() string { return providerName }

// Complete sends req and returns the whole answer. Failures are
// *llm.ProviderError (retryable ones already retried), ctx.Err() (wrapped)
// when ctx ends, or an error wrapping [ErrInvalidRequest] or [ErrNoModel]
// when req cannot be sent.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	body, err := p.encode(req, false)
	if err != nil {
		return nil, err
	}
	var out *llm.Response
	err = p.retry.Do(ctx, func(ctx context.Context) error {
		resp, err := p.post(ctx, body, false)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
		if err != nil {
			return transportError(ctx, err, resp.Header.Get("Request-Id"))
		}
		out, err = parseResponse(data)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Stream sends req with "stream": true and yields text and thinking
// deltas, each tool call when its block stops, and a final StreamDone
// whose Response carries thinking signatures and usage. Opening the stream
// is retried like Complete; a stream that breaks after it opened yields an
// error wrapping [llm.ErrIncompleteStream], and a mid-stream error event
// yields its *llm.ProviderError (overloaded_error is Retryable).
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		body, err := p.encode(req, true)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		var resp *http.Response
		err = p.retry.Do(ctx, func(ctx context.Context) error {
			var err error
			resp, err = p.post(ctx, body, true)
			return err
		})
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		defer resp.Body.Close()
		readStream(resp.Body, resp.Header.Get("Request-Id"), func(ev llm.StreamEvent, err error) bool {
			if err != nil && ctx.Err() != nil {
				// The stream broke because the caller cancelled: report
				// the cancellation, not a provider failure.
				err = fmt.Errorf("anthropic: stream cancelled: %w", context.Cause(ctx))
			}
			return yield(ev, err)
		})
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
	if len(p.cfg.extraBody) > 0 {
		return mergeBody(body, p.cfg.extraBody)
	}
	return body, nil
}

// post sends one attempt. A non-2xx answer is returned as the
// *llm.ProviderError it maps to, with the body closed.
func (p *Provider) post(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("anthropic: building request: %w", err)
	}
	h := hreq.Header
	h.Set("Content-Type", "application/json")
	h.Set("X-Api-Key", p.cfg.apiKey)
	h.Set("Anthropic-Version", APIVersion)
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	for k, v := range p.cfg.headers {
		h.Set(k, v)
	}
	resp, err := p.cfg.client.Do(hreq)
	if err != nil {
		return nil, transportError(ctx, err, "")
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, errorFromResponse(resp)
	}
	return resp, nil
}

// transportError wraps a failure to reach the server or read its answer.
// It is retryable (a dropped connection may succeed next time) unless ctx
// ended, in which case the context's error is what the caller gets.
func transportError(ctx context.Context, err error, requestID string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("anthropic: %w", errors.Join(context.Cause(ctx), err))
	}
	return &llm.ProviderError{
		Provider:  providerName,
		Message:   err.Error(),
		Retryable: true,
		RequestID: requestID,
		Err:       err,
	}
}
