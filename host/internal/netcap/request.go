package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// httpRequestDoc is Extism's http_request argument.
type httpRequestDoc struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
}

// maxHTTPRequestDoc bounds http_request's request document (method, URL,
// headers).
const maxHTTPRequestDoc = 64 << 10

// noCapabilities is why every capability is refused while describe runs.
const noCapabilities = "describe runs with no capabilities"

// httpRequest implements Extism's http_request through the module's
// network policy. Refusals, network errors and oversized responses trap
// the call, as in Extism, with an error the model can act on.
func (inst *instance) httpRequest(reqOff, bodyOff uint64) uint64 {
	raw := inst.read(reqOff, "http_request", maxHTTPRequestDoc)
	inst.k.free(reqOff)
	var doc httpRequestDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		inst.fail(&TrapError{Reason: fmt.Sprintf("http_request: the request is not JSON {\"url\",\"method\",\"headers\"}: %v", err)})
	}
	method := strings.ToUpper(doc.Method)
	if method == "" {
		method = http.MethodGet
	}
	u, err := url.Parse(doc.URL)
	if err != nil {
		inst.fail(&TrapError{Reason: fmt.Sprintf("http_request: invalid url %q: %v", doc.URL, err)})
	}
	p := inst.l.net
	if inst.describing || p == nil {
		reason := "the module has no net: grant"
		if inst.describing {
			reason = noCapabilities
		}
		inst.deny(&DeniedError{Kind: "net", Action: "request to " + u.Redacted(), Reason: reason})
	}
	g, denied := p.checkURL(u)
	if denied != nil {
		inst.deny(denied)
	}
	inst.use(g.String())
	var body io.Reader
	if bodyOff != 0 {
		body = bytes.NewReader(inst.readLimited(bodyOff, "http_request body", LimitHTTPRequest, inst.limits.HTTPRequest))
		inst.k.free(bodyOff)
	}
	// inst.ctx is the run's (a runContext): it carries the instance for
	// the dialer's policy check.
	req, err := http.NewRequestWithContext(inst.ctx, method, u.String(), body)
	if err != nil {
		inst.fail(&TrapError{Reason: fmt.Sprintf("http_request: %v", err)})
	}
	for k, v := range doc.Headers {
		req.Header.Set(k, v)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		var d *DeniedError
		if errors.As(err, &d) {
			inst.deny(d)
		}
		if inst.ctx.Err() != nil {
			inst.fail(timeLimitErr(inst.limits.Timeout))
		}
		inst.fail(&TrapError{Reason: fmt.Sprintf("net: %s %s: %v", method, u.Redacted(), unwrapURLError(err))})
	}
	defer resp.Body.Close()
	limit := inst.limits.HTTPResponse
	if resp.ContentLength > limit {
		inst.fail(limitErr(LimitHTTPResponse, limit))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if inst.ctx.Err() != nil {
			inst.fail(timeLimitErr(inst.limits.Timeout))
		}
		inst.fail(&TrapError{Reason: fmt.Sprintf("net: reading the response of %s: %v", u.Redacted(), err)})
	}
	if int64(len(data)) > limit {
		inst.fail(limitErr(LimitHTTPResponse, limit))
	}
	inst.httpStatus = int32(resp.StatusCode)
	inst.httpHdrs = resp.Header
	if len(data) == 0 {
		return 0
	}
	return inst.write(data)
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

// httpHeaders returns the last response's headers as a JSON object, the
// names in lower case and the values of a repeated header joined by ","
// (as extism/go-sdk joins them, so plugins parse them alike).
func (inst *instance) httpHeaders() uint64 {
	if inst.httpHdrs == nil {
		return 0
	}
	m := make(map[string]string, len(inst.httpHdrs))
	for k, v := range inst.httpHdrs {
		m[strings.ToLower(k)] = strings.Join(v, ",")
	}
	b, err := json.Marshal(m)
	if err != nil {
		inst.fail(&TrapError{Reason: "http_headers: " + err.Error()})
	}
	return inst.write(b)
}
