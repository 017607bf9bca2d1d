package gemini

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/internal/retry"
	"github.com/autoagent-go/autoagent/llm"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// errorFromResponse builds the *llm.ProviderError for a non-2xx response
// and closes its body.
func errorFromResponse(resp *http.Response) error {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var w wireError
	var pe *llm.ProviderError
	if json.Unmarshal(body, &w) == nil && (w.Error.Message != "" || w.Error.Status != "") {
		pe = errorFromBody(resp.StatusCode, &w.Error, resp.Header.Get("X-Request-Id"))
	} else {
		pe = &llm.ProviderError{
			Provider:  providerName,
			Status:    resp.StatusCode,
			Message:   strings.TrimSpace(truncate(string(body), 500)),
			Retryable: retry.RetryableStatus(resp.StatusCode),
			RequestID: resp.Header.Get("X-Request-Id"),
		}
		if pe.Message == "" {
			pe.Message = http.StatusText(resp.StatusCode)
		}
	}
	// A RetryInfo in the body is more precise than a header; either is
	// honoured by the retry policy.
	if pe.RetryAfter == 0 {
		pe.RetryAfter = retry.ParseRetryAfter(resp.Header, time.Now())
	}
	return pe
}

// errorFromBody maps a Google API error document:
// {"error":{"code":429,"message","status":"RESOURCE_EXHAUSTED","details":[
// {"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}.
func errorFromBody(status int, e *wireErrorBody, requestID string) *llm.ProviderError {
	if status == 0 {
		status = e.Code
	}
	pe := &llm.ProviderError{
		Provider:  providerName,
		Status:    status,
		Code:      e.Status,
		Message:   e.Message,
		RequestID: requestID,
		Retryable: (status != 0 && retry.RetryableStatus(status)) || retryableStatus(e.Status),
	}
	for _, d := range e.Details {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") && d.RetryDelay != "" {
			if dur, err := time.ParseDuration(d.RetryDelay); err == nil && dur > 0 {
				pe.RetryAfter = dur
			}
		}
	}
	if pe.Message == "" {
		pe.Message = http.StatusText(status)
	}
	return pe
}

// retryableStatus reports the google.rpc codes a later identical request
// can survive.
func retryableStatus(s string) bool {
	switch s {
	case "RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED", "ABORTED":
		return true
	}
	return false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
