package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/autoagent-go/autoagent/internal/httpx"
)

// DefaultEmbeddingModel is the model Embed uses when
// Options.EmbeddingModel is empty.
const DefaultEmbeddingModel = "gemini-embedding-001"

// embedBatch is how many texts one batchEmbedContents request carries:
// the API's limit is 100.
const embedBatch = 100

// ErrEmbedding is wrapped by Embed's error when the answer does not hold
// one vector per text.
var ErrEmbedding = errors.New("gemini: embeddings answer does not match the request")

type wireEmbedRequest struct {
	Requests []wireEmbedContent `json:"requests"`
}

type wireEmbedContent struct {
	Model                string         `json:"model"`
	Content              wireEmbedParts `json:"content"`
	OutputDimensionality int            `json:"outputDimensionality,omitempty"`
}

type wireEmbedParts struct {
	Parts []wireEmbedText `json:"parts"`
}

type wireEmbedText struct {
	Text string `json:"text"`
}

type wireEmbedResponse struct {
	Embeddings []struct {
		Values []float32 `json:"values"`
	} `json:"embeddings"`
}

// Embed returns one embedding vector per text, in order, from the API's
// batchEmbedContents method, with Options.EmbeddingModel
// (DefaultEmbeddingModel when empty) and Options.EmbeddingDimensions. Texts
// are sent 100 a request; retryable failures are retried as Complete's
// are. Its signature is memory.EmbedFunc's and retrieve.Embedder's. Safe
// for concurrent use.
func (p *Provider) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	model := strings.TrimPrefix(p.cfg.embeddingModel, "models/")
	if model == "" {
		model = DefaultEmbeddingModel
	}
	endpoint := p.cfg.base + "/models/" + url.PathEscape(model) + ":batchEmbedContents"
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += embedBatch {
		batch := texts[start:min(start+embedBatch, len(texts))]
		req := wireEmbedRequest{Requests: make([]wireEmbedContent, len(batch))}
		for i, t := range batch {
			req.Requests[i] = wireEmbedContent{Model: "models/" + model, Content: wireEmbedParts{Parts: []wireEmbedText{{Text: t}}}, OutputDimensionality: p.cfg.embeddingDimensions}
		}
		body, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		var w wireEmbedResponse
		err = p.retry.Do(ctx, func(ctx context.Context) error {
			resp, err := p.postJSON(ctx, endpoint, body)
			if err != nil {
				return err
			}
			w = wireEmbedResponse{}
			return httpx.DecodeJSON(providerName, resp, &w)
		})
		if err != nil {
			return nil, err
		}
		if len(w.Embeddings) != len(batch) {
			return nil, fmt.Errorf("%w: %d texts sent, %d vectors received", ErrEmbedding, len(batch), len(w.Embeddings))
		}
		for i, e := range w.Embeddings {
			if len(e.Values) == 0 {
				return nil, fmt.Errorf("%w: an empty vector for text %d of %d", ErrEmbedding, start+i, len(texts))
			}
			out = append(out, e.Values)
		}
	}
	return out, nil
}

// postJSON sends one attempt of a JSON request to endpoint with the key
// in its header and the provider's headers.
func (p *Provider) postJSON(ctx context.Context, endpoint string, body []byte) (*http.Response, error) {
	key, err := p.cfg.key()
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	h.Set("X-Goog-Api-Key", key)
	for k, v := range p.cfg.headers {
		h.Set(k, v)
	}
	return httpx.Post(ctx, httpx.Request{Provider: providerName, Client: p.cfg.client, URL: endpoint, Header: h, Body: body})
}
