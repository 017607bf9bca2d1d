// Command http_get is the first-party tool module that fetches a URL
// (capability: net:HOST for each host it may reach).
package main

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	pdk "github.com/autoagent-go/autoagent/pdk/go"
)

// Input is the http_get arguments.
type Input struct {
	URL      string            `json:"url" jsonschema:"absolute http:// or https:// URL to fetch; its host must be granted to this tool"`
	Headers  map[string]string `json:"headers,omitempty" jsonschema:"request headers, e.g. {\"Accept\": \"application/json\"}"`
	MaxBytes int               `json:"max_bytes,omitempty" jsonschema:"cut the body after this many bytes (default 65536, at most 1048576)"`
}

// Output is the structured result.
type Output struct {
	Status    int    `json:"status" jsonschema:"the HTTP status code"`
	Body      string `json:"body" jsonschema:"the response body as text (empty when it is binary)"`
	Bytes     int    `json:"bytes" jsonschema:"the size of the whole body in bytes"`
	Truncated bool   `json:"truncated" jsonschema:"the body was cut at max_bytes"`
	Binary    bool   `json:"binary" jsonschema:"the body is not UTF-8 text and is not shown"`
}

const (
	defaultMax = 64 << 10
	hardMax    = 1 << 20
)

func httpGet(ctx context.Context, in Input) (pdk.Result, error) {
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return pdk.Result{}, fmt.Errorf("url %q is not an absolute http:// or https:// URL", in.URL)
	}
	limit := in.MaxBytes
	if limit <= 0 {
		limit = defaultMax
	}
	limit = min(limit, hardMax)
	resp, err := pdk.Fetch(ctx, pdk.Request{URL: in.URL, Header: in.Headers})
	if err != nil {
		return pdk.Result{}, err
	}
	out := Output{Status: resp.Status, Bytes: len(resp.Body)}
	body := resp.Body
	if len(body) > limit {
		body, out.Truncated = body[:limit], true
		for cut := 0; cut < utf8.UTFMax-1 && !utf8.Valid(body); cut++ {
			body = body[:len(body)-1] // do not cut a character in two
		}
	}
	if utf8.Valid(body) {
		out.Body = string(body)
	} else {
		out.Binary = true
	}
	r, err := pdk.JSON(out)
	if err != nil {
		return pdk.Result{}, err
	}
	var text strings.Builder
	fmt.Fprintf(&text, "HTTP %d, %d bytes", out.Status, out.Bytes)
	switch {
	case out.Binary:
		text.WriteString(" of binary data (not shown)")
	case out.Truncated:
		fmt.Fprintf(&text, " (first %d shown)\n\n%s", len(body), out.Body)
	default:
		text.WriteString("\n\n" + out.Body)
	}
	r.Content = []pdk.Content{{Type: "text", Text: text.String()}}
	if out.Status >= 400 {
		r.IsError = true
	}
	return r, nil
}

func init() {
	// The host is the operator's choice (net:HOST at approval): request the kind.
	pdk.RequestCapabilities("net")
	pdk.Register(pdk.NewTool("http_get",
		"Fetch a web page or API response with HTTP GET and return its status and body as text. Only hosts granted to this tool are reachable; redirects are followed when they stay on granted hosts.",
		httpGet).WithAnnotations(pdk.Annotations{Title: "HTTP GET", ReadOnly: true, OpenWorld: true}))
}

func main() {}
