//go:build wasip1

package pdk

import (
	"fmt"

	"github.com/autoagent-go/autoagent/pdk/go/extism"
)

func fetch(req Request) (*Response, error) {
	doc, err := marshal(struct {
		URL    string            `json:"url"`
		Method string            `json:"method"`
		Header map[string]string `json:"headers,omitempty"`
	}{req.URL, req.Method, req.Header})
	if err != nil {
		return nil, fmt.Errorf("pdk: encoding the request: %w", err)
	}
	var body uint64
	if req.Body != nil {
		body = extism.Write(req.Body)
	}
	// The host frees the request and body blocks; the response block is ours.
	off := extism.HTTPRequest(extism.Write(doc), body)
	status := extism.HTTPStatusCode()
	resp := &Response{Status: int(status)}
	if off != 0 {
		resp.Body = extism.Take(off)
	}
	if status == 0 {
		return nil, fmt.Errorf("pdk: %s %s: the host returned no response", req.Method, req.URL)
	}
	return resp, nil
}
