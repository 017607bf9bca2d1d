package fixturetest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// HTTPRR reads the langchaingo httprr trace at rel (below [Dir]): its
// exchanges in order, with the real headers. A trace that does not parse
// fails t.
func HTTPRR(t testing.TB, rel string) []Exchange {
	t.Helper()
	ex, err := parseHTTPRR([]byte(ReadFile(t, rel)))
	if err != nil {
		t.Fatalf("fixturetest: httprr trace %s: %v", rel, err)
	}
	return ex
}

// parseHTTPRR reads the format: a line "httprr trace v1", then for each
// exchange a line "<request bytes> <response bytes>" followed by the raw
// request and the raw response.
func parseHTTPRR(data []byte) ([]Exchange, error) {
	header, rest, ok := bytes.Cut(data, []byte("\n"))
	if !ok || string(header) != "httprr trace v1" {
		return nil, errors.New(`not an httprr trace: the first line is not "httprr trace v1"`)
	}
	var out []Exchange
	for len(rest) > 0 {
		line, after, ok := bytes.Cut(rest, []byte("\n"))
		if !ok {
			return nil, fmt.Errorf("exchange %d: truncated size line", len(out)+1)
		}
		var nreq, nresp int
		if _, err := fmt.Sscanf(string(line), "%d %d", &nreq, &nresp); err != nil || nreq < 0 || nresp < 0 {
			return nil, fmt.Errorf("exchange %d: bad size line %q", len(out)+1, line)
		}
		if len(after) < nreq+nresp {
			return nil, fmt.Errorf("exchange %d: truncated: %d bytes left, sizes say %d", len(out)+1, len(after), nreq+nresp)
		}
		e, err := parseRaw(after[:nreq], after[nreq:nreq+nresp])
		if err != nil {
			return nil, fmt.Errorf("exchange %d: %w", len(out)+1, err)
		}
		out = append(out, e)
		rest = after[nreq+nresp:]
	}
	return out, nil
}

func parseRaw(rawReq, rawResp []byte) (Exchange, error) {
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(rawReq)))
	if err != nil {
		return Exchange{}, fmt.Errorf("request: %w", err)
	}
	reqBody, err := io.ReadAll(req.Body)
	if err != nil {
		return Exchange{}, fmt.Errorf("request body: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(rawResp)), req)
	if err != nil {
		return Exchange{}, fmt.Errorf("response: %w", err)
	}
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		return Exchange{}, fmt.Errorf("response body: %w", err)
	}
	return Exchange{
		Request: Request{Method: req.Method, Path: req.URL.RequestURI(), Header: req.Header, Body: string(reqBody)},
		Answer:  Answer{Status: resp.StatusCode, Header: resp.Header, Body: string(respBody)},
	}, nil
}
