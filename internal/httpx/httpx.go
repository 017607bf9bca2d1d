// Package httpx sends provider requests over net/http and turns every way
// they can fail into a *llm.ProviderError the retry policy understands.
//
//	resp, err := httpx.Post(ctx, httpx.Request{
//		Provider: "openai",
//		Client:   client, // one persistent *http.Client per provider
//		URL:      baseURL + "/chat/completions",
//		Header:   http.Header{"Authorization": {"Bearer " + key}},
//		Body:     payload,
//	})
//	if err != nil {
//		return err // *llm.ProviderError (status, code, request id, Retryable, RetryAfter) or ctx's error
//	}
//	defer resp.Body.Close()
//
// # Errors
//
// A non-2xx response becomes a *llm.ProviderError: Status is the HTTP
// status; Retryable follows [retry.RetryableStatus] unless the response
// says otherwise (an x-should-retry header, or a body showing that retrying
// cannot help); RetryAfter comes from the Retry-After /
// retry-after-ms headers or a hint in the body; RequestID from the
// x-request-id or request-id header; Code and Message from the body, read up
// to MaxErrorBody bytes by the provider's [ParseErrorFunc] (or
// [ParseJSONError]), which also sees the headers. A failure to get any response is a *llm.ProviderError
// with Status 0, retryable for dropped connections and timeouts, not for an
// unknown host. When ctx ends, the error wraps ctx.Err() and is not a
// ProviderError, so nobody retries a cancelled call.
//
// # Calls
//
// [Complete] and [Stream] are the retry and stream glue every adapter
// shares: an adapter supplies the function that posts one attempt and the
// one that turns the answer into llm types. A stream is retried only
// until it opens, watched for silence by [WatchIdle], and its failures
// are described by [StreamError] (the body could not be read),
// [IncompleteStream] (it ended before the answer did) and [MalformedEvent]
// (an event is not the JSON expected). The small request helpers beside them
// ([BaseURL], [APIKey], [MergeJSON], [JSONObject], [InlineImage]) are the
// option and encoding rules the adapters would otherwise each write.
package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/autoagent-go/autoagent/internal/retry"
	"github.com/autoagent-go/autoagent/llm"
)

// MaxErrorBody is how much of an error response is read: enough for any
// provider's JSON error, bounded against a proxy that streams an HTML page.
const MaxErrorBody = 64 << 10

// UserAgent is sent when the request sets none.
const UserAgent = "autoagent-go/1"

// NewClient returns the persistent client a provider uses when its caller
// gives none: a private transport (so one provider's idle connections do
// not crowd another's) with keep-alive and HTTP/2, and no overall timeout,
// because a streamed answer may legitimately last minutes; cancellation and
// stream idle timeouts bound each call instead.
func NewClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 16
	return &http.Client{Transport: t}
}

// Request is one JSON POST to a provider.
type Request struct {
	// Provider names the back-end in errors ("openai").
	Provider string
	// Client sends the request; nil means http.DefaultClient.
	Client *http.Client
	// URL is the full endpoint URL.
	URL string
	// Header is sent as is. Content-Type (application/json), Accept
	// (application/json) and User-Agent are added when absent.
	Header http.Header
	// Body is the JSON payload. It is a byte slice so that a retry can send
	// it again.
	Body []byte
	// ParseError reads the provider's error body; nil means ParseJSONError.
	ParseError ParseErrorFunc
}

// Post sends r and returns the response when its status is 2xx; the caller
// closes its body. Otherwise it returns an error as the package doc says.
func Post(ctx context.Context, r Request) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(r.Body))
	if err != nil {
		return nil, fmt.Errorf("%s: building request: %w", r.Provider, err)
	}
	for k, vs := range r.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", UserAgent)
	}
	c := r.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, TransportError(ctx, r.Provider, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	return nil, errorFromResponse(r.Provider, resp, r.ParseError)
}

// errorFromResponse reads at most MaxErrorBody bytes of resp's body, closes
// it, and returns the error it describes. parse may be nil (ParseJSONError).
func errorFromResponse(provider string, resp *http.Response, parse ParseErrorFunc) *llm.ProviderError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	_ = resp.Body.Close()
	if parse == nil {
		parse = ParseJSONError
	}
	d := parse(resp.StatusCode, resp.Header, body)
	pe := &llm.ProviderError{
		Provider:   provider,
		Status:     resp.StatusCode,
		Code:       d.Code,
		Message:    d.Message,
		Retryable:  (retry.RetryableStatus(resp.StatusCode) || d.ShouldRetry) && !d.NotRetryable,
		RetryAfter: retry.ParseRetryAfter(resp.Header, time.Now()),
		RequestID:  RequestID(resp.Header),
	}
	if pe.RetryAfter == 0 {
		pe.RetryAfter = d.RetryAfter
	}
	if pe.Message == "" {
		pe.Message = http.StatusText(resp.StatusCode)
	}
	return pe
}

// RequestID returns the provider's request id from the response headers
// (x-request-id for OpenAI-compatible servers, request-id for Anthropic).
func RequestID(h http.Header) string {
	for _, k := range []string{"X-Request-Id", "Request-Id"} {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}

// TransportError describes a failure to get (or keep reading) a response.
// When ctx has ended it returns an error wrapping ctx.Err(); otherwise a
// *llm.ProviderError with Status 0 wrapping err, retryable unless the host
// does not resolve.
func TransportError(ctx context.Context, provider string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", provider, ctx.Err())
	}
	var dns *net.DNSError
	retryable := !(errors.As(err, &dns) && dns.IsNotFound)
	return &llm.ProviderError{Provider: provider, Message: err.Error(), Retryable: retryable, Err: err}
}
