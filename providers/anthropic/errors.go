package anthropic

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/internal/retry"
	"github.com/autoagent-go/autoagent/llm"
)

// maxErrorBody bounds how much of an error response is read: enough for
// any real error document, not enough for a broken server to exhaust memory.
const maxErrorBody = 64 << 10

// errorFromResponse builds the *llm.ProviderError for a non-2xx response
// and closes its body.
func errorFromResponse(resp *http.Response) error {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	pe := errorFromBody(resp.StatusCode, body, resp.Header.Get("Request-Id")).(*llm.ProviderError)
	pe.RetryAfter = retry.ParseRetryAfter(resp.Header, time.Now())
	// Anthropic's servers say explicitly whether a retry can help; their
	// word beats the status-code heuristic.
	switch strings.ToLower(resp.Header.Get("X-Should-Retry")) {
	case "true":
		pe.Retryable = true
	case "false":
		pe.Retryable = false
	}
	return pe
}

// errorFromBody decodes an Anthropic error document
// ({"type":"error","error":{"type","message"},"request_id"}); a body that
// is not one (a proxy's HTML page) becomes the message, shortened.
func errorFromBody(status int, body []byte, requestID string) error {
	pe := &llm.ProviderError{
		Provider:  providerName,
		Status:    status,
		RequestID: requestID,
		Retryable: status != 0 && retry.RetryableStatus(status),
	}
	var w wireError
	if json.Unmarshal(body, &w) == nil && w.Error.Type != "" {
		pe.Code = w.Error.Type
		pe.Message = w.Error.Message
		if pe.RequestID == "" {
			pe.RequestID = w.RequestID
		}
		if retryableCode(w.Error.Type) {
			pe.Retryable = true
		}
	} else {
		pe.Message = strings.TrimSpace(truncate(string(body), 500))
	}
	if pe.Message == "" {
		pe.Message = http.StatusText(status)
	}
	return pe
}

// retryableCode reports the error types that a later identical request can
// survive: 529 overloaded_error, rate limits, and internal api_error.
func retryableCode(t string) bool {
	switch t {
	case "overloaded_error", "rate_limit_error", "api_error", "timeout_error":
		return true
	}
	return false
}
