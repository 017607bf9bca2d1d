package httpx

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrorDetail is what a provider's error response says.
type ErrorDetail struct {
	// Code is the provider's error code or type.
	Code string
	// Message is the human-readable message.
	Message string
	// RetryAfter is a retry hint found in the body (Gemini's RetryInfo);
	// a Retry-After header takes precedence.
	RetryAfter time.Duration
	// NotRetryable says the response shows that the same request cannot
	// succeed later although its status is usually transient (OpenAI's 429
	// "insufficient_quota": the account is out of credit; x-should-retry:
	// false). It wins over ShouldRetry.
	NotRetryable bool
	// ShouldRetry says the response shows that the same request can
	// succeed later although its status is usually final (x-should-retry:
	// true).
	ShouldRetry bool
}

// ParseErrorFunc reads a provider's error response: its status, headers
// and body (at most MaxErrorBody bytes, possibly cut short). It must not
// fail: a body it does not understand gives what it can, at least a
// Message. Retry-After and the request id are read from the headers by
// the caller; the headers are here for verdicts only the provider knows.
type ParseErrorFunc func(status int, header http.Header, body []byte) ErrorDetail

// ParseJSONError understands the error bodies of the providers we speak to:
//
//	{"error": {"message": "...", "type": "...", "code": "..."}}        OpenAI, Groq, DeepSeek, llama.cpp
//	{"type": "error", "error": {"type": "overloaded_error", "message": "..."}}   Anthropic
//	{"error": {"code": 429, "message": "...", "status": "RESOURCE_EXHAUSTED",
//	           "details": [{"retryDelay": "30s", ...}]}}                Gemini (also wrapped in a list)
//	{"error": "..."}, {"message": "..."}, {"detail": "..."}            Ollama, vLLM, proxies
//
// The code is the string "code", else "status", else "type". Anything else
// (an HTML page from a proxy) becomes the Message, trimmed and shortened.
//
// An x-should-retry header of "true" or "false" decides whether the request
// is retried, whatever the status: Anthropic and OpenAI send it where they
// know better than the status (their own SDKs obey it the same way).
func ParseJSONError(status int, header http.Header, body []byte) ErrorDetail {
	d := parseJSONBody(body)
	switch strings.ToLower(strings.TrimSpace(header.Get("X-Should-Retry"))) {
	case "true":
		d.ShouldRetry = true
	case "false":
		d.NotRetryable = true
	}
	return d
}

// parseJSONBody is ParseJSONError without the headers.
func parseJSONBody(body []byte) ErrorDetail {
	var env struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Type    string          `json:"type"`
	}
	raw := body
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 {
		raw = list[0]
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return ErrorDetail{Message: Truncate(string(body), 500)}
	}
	var d ErrorDetail
	if len(env.Error) > 0 {
		var s string
		if json.Unmarshal(env.Error, &s) == nil {
			d.Message = s
		} else {
			var e struct {
				Message string            `json:"message"`
				Type    string            `json:"type"`
				Status  string            `json:"status"`
				Code    json.RawMessage   `json:"code"`
				Details []json.RawMessage `json:"details"`
			}
			if json.Unmarshal(env.Error, &e) == nil {
				d.Message = e.Message
				d.Code = firstNonEmpty(jsonString(e.Code), e.Status, e.Type)
				d.RetryAfter = retryInfo(e.Details)
			}
		}
	}
	if d.Message == "" {
		d.Message = env.Message
	}
	if d.Message == "" && len(env.Detail) > 0 {
		var s string
		if json.Unmarshal(env.Detail, &s) == nil {
			d.Message = s
		} else {
			d.Message = Truncate(string(env.Detail), 500)
		}
	}
	if d.Code == "" && env.Type != "" && env.Type != "error" {
		d.Code = env.Type
	}
	if d.Message == "" && d.Code == "" {
		d.Message = Truncate(string(body), 500)
	}
	return d
}

// jsonString returns a JSON string's value; numbers (Gemini repeats the
// HTTP status as "code") and null give "".
func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

// retryInfo finds a google.rpc.RetryInfo "retryDelay" ("30s", "1.5s").
func retryInfo(details []json.RawMessage) time.Duration {
	for _, raw := range details {
		var ri struct {
			RetryDelay string `json:"retryDelay"`
		}
		if json.Unmarshal(raw, &ri) != nil || len(ri.RetryDelay) < 2 || ri.RetryDelay[len(ri.RetryDelay)-1] != 's' {
			continue
		}
		secs, err := strconv.ParseFloat(ri.RetryDelay[:len(ri.RetryDelay)-1], 64)
		if err == nil && secs > 0 && secs < 86400 {
			return time.Duration(secs * float64(time.Second))
		}
	}
	return 0
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
