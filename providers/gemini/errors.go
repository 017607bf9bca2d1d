package gemini

import (
	"net/http"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/internal/retry"
	"github.com/autoagent-go/autoagent/llm"
)

// bodyError maps an error Gemini reports inside a 200 stream (a chunk of
// the form {"error":{"code":503,"message","status":"UNAVAILABLE"}}). HTTP
// error responses are mapped by the shared parser instead.
func bodyError(e *wireErrorBody, requestID string) *llm.ProviderError {
	pe := &llm.ProviderError{
		Provider:  providerName,
		Status:    e.Code,
		Code:      e.Status,
		Message:   e.Message,
		RequestID: requestID,
		Retryable: (e.Code != 0 && retry.RetryableStatus(e.Code)) || retryableStatus(e.Status),
	}
	for _, d := range e.Details {
		if strings.HasSuffix(d.Type, "google.rpc.RetryInfo") {
			// A protobuf Duration in JSON: "30s", "1.5s".
			if dur, err := time.ParseDuration(d.RetryDelay); err == nil && dur > 0 {
				pe.RetryAfter = dur
			}
		}
	}
	if pe.Message == "" {
		pe.Message = http.StatusText(e.Code)
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
