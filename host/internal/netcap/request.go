package netcap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
)

// Call is what the network functions need of the call in progress: the
// call itself and the instance's session.
type Call interface {
	hostcall.Call
	// Net returns the instance's session: nil when the module has no net:
	// grant.
	Net() *Session
}

// Session is an instance's use of the network: the module's policy and
// the last response's status and headers, which http_status_code and
// http_headers report.
type Session struct {
	policy  *Policy
	status  int32
	headers http.Header
}

// NewSession returns a session under policy.
func NewSession(policy *Policy) *Session { return &Session{policy: policy} }

// Reset forgets the last response, as a new call begins.
func (s *Session) Reset() { s.status, s.headers = 0, nil }

// Funcs are the functions of extism:host/env that reach the network (Extism's
// names and semantics, host/ABI.md §1.2); calling any needs a net: grant
// (hostmod's gate refuses the call without one).
var Funcs = []hostcall.Func[Call]{
	{Name: "http_request", Params: hostcall.Sig(hostcall.I64, hostcall.I64), Results: hostcall.Sig(hostcall.I64), Grant: "net",
		Fn: func(c Call, s []uint64) { s[0] = request(c, s[0], s[1]) }},
	{Name: "http_status_code", Results: hostcall.Sig(hostcall.I32), Grant: "net",
		Fn: func(c Call, s []uint64) { s[0] = uint64(uint32(status(c))) }},
	{Name: "http_headers", Results: hostcall.Sig(hostcall.I64), Grant: "net",
		Fn: func(c Call, s []uint64) { s[0] = headers(c) }},
}

// requestDoc is Extism's http_request argument.
type requestDoc struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
}

// maxRequestDoc bounds http_request's request document (method, URL,
// headers).
const maxRequestDoc = 64 << 10

// callKey carries the Call in a request's context, for the redirect check
// to record the grants each hop used.
type callKey struct{}

// request implements Extism's http_request through the module's network
// policy. Refusals, network errors and oversized responses end the call,
// as in Extism, with an error the model can act on.
func request(c Call, reqOff, bodyOff uint64) uint64 {
	raw := c.Read(reqOff, "http_request", maxRequestDoc)
	c.Free(reqOff)
	var doc requestDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		c.Crash(fmt.Sprintf("http_request: the request is not JSON {\"url\",\"method\",\"headers\"}: %v", err))
	}
	method := strings.ToUpper(doc.Method)
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.Parse(doc.URL)
	if err != nil {
		c.Crash(fmt.Sprintf("http_request: invalid url %q: %v", doc.URL, err))
	}
	s := c.Net()
	if c.Describing() || s == nil {
		reason := "the module has no net: grant"
		if c.Describing() {
			reason = hostcall.NoCapabilities
		}
		c.Deny("net", "request to "+u.Redacted(), reason)
	}
	g, denied := s.policy.CheckURL(u)
	if denied != nil {
		c.Deny("net", denied.Action, denied.Reason)
	}
	c.Use(g.String())
	limits := c.Limits()
	var body io.Reader
	if bodyOff != 0 {
		body = bytes.NewReader(c.ReadLimited(bodyOff, "http_request body", hostcall.LimitHTTPRequest, limits.HTTPRequest))
		c.Free(bodyOff)
	}
	ctx := c.Context()
	req, err := http.NewRequestWithContext(context.WithValue(ctx, callKey{}, c), method, u.String(), body)
	if err != nil {
		c.Crash(fmt.Sprintf("http_request: %v", err))
	}
	for k, v := range doc.Headers {
		req.Header.Set(k, v)
	}
	resp, err := s.policy.client.Do(req)
	if err != nil {
		var r *Refusal
		if errors.As(err, &r) {
			c.Deny("net", r.Action, r.Reason)
		}
		if ctx.Err() != nil {
			c.TimeUp()
		}
		c.Crash(fmt.Sprintf("net: %s %s: %v", method, u.Redacted(), unwrapURLError(err)))
	}
	defer resp.Body.Close()
	limit := limits.HTTPResponse
	if resp.ContentLength > limit {
		c.Exceed(hostcall.LimitHTTPResponse)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if ctx.Err() != nil {
			c.TimeUp()
		}
		c.Crash(fmt.Sprintf("net: reading the response of %s: %v", u.Redacted(), err))
	}
	if int64(len(data)) > limit {
		c.Exceed(hostcall.LimitHTTPResponse)
	}
	s.status = int32(resp.StatusCode)
	s.headers = resp.Header
	if len(data) == 0 {
		return 0
	}
	return c.Write(data)
}

// unwrapURLError drops net/http's "Get \"url\": " prefix, which repeats
// what the message already says.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// status is the last response's status, 0 before any.
func status(c Call) int32 {
	if s := c.Net(); s != nil {
		return s.status
	}
	return 0
}

// headers returns the last response's headers as a JSON object, the names
// in lower case and the values of a repeated header joined by "," (as
// extism/go-sdk joins them, so plugins parse them alike).
func headers(c Call) uint64 {
	s := c.Net()
	if s == nil || s.headers == nil {
		return 0
	}
	m := make(map[string]string, len(s.headers))
	for k, v := range s.headers {
		m[strings.ToLower(k)] = strings.Join(v, ",")
	}
	b, err := json.Marshal(m)
	if err != nil {
		c.Crash("http_headers: " + err.Error())
	}
	return c.Write(b)
}
