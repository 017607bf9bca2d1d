package fixturetest

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"go.yaml.in/yaml/v3"
)

// Cassette reads the go-vcr v2 cassette at rel (below [Dir]): its
// interactions in order. A cassette that does not parse or holds no
// interaction fails t.
func Cassette(t testing.TB, rel string) []Exchange {
	t.Helper()
	ex, err := parseCassette([]byte(ReadFile(t, rel)))
	if err != nil {
		t.Fatalf("fixturetest: cassette %s: %v", rel, err)
	}
	return ex
}

// cassette is the part of a go-vcr v2 cassette the tests read.
type cassette struct {
	Interactions []struct {
		Request struct {
			Body    string              `yaml:"body"`
			URL     string              `yaml:"url"`
			Method  string              `yaml:"method"`
			Headers map[string][]string `yaml:"headers"`
		} `yaml:"request"`
		Response struct {
			Body    string              `yaml:"body"`
			Code    int                 `yaml:"code"`
			Headers map[string][]string `yaml:"headers"`
		} `yaml:"response"`
	} `yaml:"interactions"`
}

func parseCassette(data []byte) ([]Exchange, error) {
	var c cassette
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	if len(c.Interactions) == 0 {
		return nil, errors.New("no interactions")
	}
	out := make([]Exchange, len(c.Interactions))
	for i, it := range c.Interactions {
		u, err := url.Parse(it.Request.URL)
		if err != nil {
			return nil, fmt.Errorf("interaction %d: %w", i, err)
		}
		out[i] = Exchange{
			Request: Request{Method: it.Request.Method, Path: u.RequestURI(), Header: canonical(it.Request.Headers), Body: it.Request.Body},
			Answer:  Answer{Status: it.Response.Code, Header: canonical(it.Response.Headers), Body: it.Response.Body},
		}
	}
	return out, nil
}

// canonical turns a cassette's header map into an http.Header whose keys
// Get finds whatever case the recorder wrote them in.
func canonical(m map[string][]string) http.Header {
	h := http.Header{}
	for k, vs := range m {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return h
}
