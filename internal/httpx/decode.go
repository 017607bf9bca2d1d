package httpx

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/autoagent-go/autoagent/llm"
)

// MaxResponseBody bounds a non-streamed answer: far above any real one, low
// enough that a broken server cannot exhaust memory.
const MaxResponseBody = 64 << 20

// DecodeJSON reads resp's body (at most MaxResponseBody bytes), closes it and
// decodes it into v. A body that is not the JSON expected is a non-retryable
// *llm.ProviderError quoting its start; a body cut short by the network is a
// retryable one.
func DecodeJSON(provider string, resp *http.Response, v any) error {
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBody+1))
	if err != nil {
		return &llm.ProviderError{Provider: provider, Status: resp.StatusCode, Message: "reading the response: " + err.Error(),
			Retryable: true, RequestID: RequestID(resp.Header), Err: err}
	}
	if len(body) > MaxResponseBody {
		return &llm.ProviderError{Provider: provider, Status: resp.StatusCode, RequestID: RequestID(resp.Header),
			Message: fmt.Sprintf("response larger than %d bytes", MaxResponseBody)}
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &llm.ProviderError{Provider: provider, Status: resp.StatusCode, RequestID: RequestID(resp.Header),
			Message: fmt.Sprintf("invalid JSON in response (%v): %s", err, Truncate(string(body), 300)), Err: err}
	}
	return nil
}
