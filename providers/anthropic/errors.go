package anthropic

import "github.com/autoagent-go/autoagent/llm"

// bodyError maps an error that arrived inside a 200 response: a mid-stream
// error event, or an error document served with the wrong status. Status
// is 0 then, so retryability follows the error type.
func bodyError(e *wireErrorBody, requestID string) *llm.ProviderError {
	pe := &llm.ProviderError{Provider: providerName, RequestID: requestID, Message: "error reported without details"}
	if e != nil {
		pe.Code = e.Type
		pe.Retryable = retryableCode(e.Type)
		if e.Message != "" {
			pe.Message = e.Message
		}
	}
	return pe
}

// retryableCode reports the error types that a later identical request can
// survive: overloaded_error (HTTP 529, also sent as a mid-stream error
// event), rate limits, and internal api_error. HTTP errors are classified by
// status; this matters for error events inside a 200 stream.
func retryableCode(t string) bool {
	switch t {
	case "overloaded_error", "rate_limit_error", "api_error", "timeout_error":
		return true
	}
	return false
}
