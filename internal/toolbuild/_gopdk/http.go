package pdk

import (
	"context"
	"errors"
	"fmt"
)

// ErrNoHost is returned by the capability functions when the code runs
// outside a WebAssembly host (in `go test` on the developer's machine).
var ErrNoHost = errors.New("pdk: not running inside a WebAssembly host")

// Request is an outbound HTTP request.
type Request struct {
	// Method defaults to GET.
	Method string
	// URL is absolute; its host must be granted (net:HOST).
	URL string
	// Header holds request headers, one value each.
	Header map[string]string
	// Body is sent as is; nil sends none.
	Body []byte
}

// Response is the answer to a [Request].
type Response struct {
	// Status is the HTTP status code.
	Status int
	// Body is the response body, capped by the host (4 MiB by default).
	Body []byte
}

// HTTPError is returned by [Get] for a response whose status is not 2xx.
type HTTPError struct {
	URL    string
	Status int
	Body   []byte
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("GET %s: HTTP status %d", e.URL, e.Status)
}

// Fetch sends req through the host. The host checks the URL against the
// module's net: grants (redirects included) and ends the call with an error
// when it is not granted; no request leaves without a grant. A response
// with any status is returned without error.
func Fetch(ctx context.Context, req Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Method == "" {
		req.Method = "GET"
	}
	return fetch(req)
}

// Get fetches url and returns the body of a 2xx response; other statuses
// are an [*HTTPError].
func Get(ctx context.Context, url string) ([]byte, error) {
	resp, err := Fetch(ctx, Request{URL: url})
	if err != nil {
		return nil, err
	}
	if resp.Status < 200 || resp.Status > 299 {
		return nil, &HTTPError{URL: url, Status: resp.Status, Body: resp.Body}
	}
	return resp.Body, nil
}
