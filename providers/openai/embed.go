package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/autoagent-go/autoagent/internal/httpx"
)

// DefaultEmbeddingModel is the model Embed uses when
// Options.EmbeddingModel is empty.
const DefaultEmbeddingModel = "text-embedding-3-small"

// embedBatch is how many texts one embeddings request carries: OpenAI
// accepts 2048 inputs a request; compatible servers often fewer.
const embedBatch = 256

// ErrEmbedding is wrapped by Embed's error when the server's answer does
// not hold one vector per text.
var ErrEmbedding = errors.New("openai: embeddings answer does not match the request")

type wireEmbedRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type wireEmbedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Embed returns one embedding vector per text, in order, from the
// server's embeddings endpoint (BaseURL + "/embeddings"), with
// Options.EmbeddingModel (DefaultEmbeddingModel when empty) and
// Options.EmbeddingDimensions. Texts are sent in batches; retryable
// failures are retried as Complete's are. Its signature is
// memory.EmbedFunc's and retrieve.Embedder's. Safe for concurrent use.
func (p *Provider) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	model := p.cfg.EmbeddingModel
	if model == "" {
		model = DefaultEmbeddingModel
	}
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += embedBatch {
		batch := texts[start:min(start+embedBatch, len(texts))]
		body, err := json.Marshal(wireEmbedRequest{Model: model, Input: batch, Dimensions: p.cfg.EmbeddingDimensions})
		if err != nil {
			return nil, err
		}
		var w wireEmbedResponse
		err = p.retry.Do(ctx, func(ctx context.Context) error {
			resp, err := p.postTo(ctx, p.cfg.embeddings, body, false)
			if err != nil {
				return err
			}
			w = wireEmbedResponse{}
			return httpx.DecodeJSON(p.cfg.Name, resp, &w)
		})
		if err != nil {
			return nil, err
		}
		vecs := make([][]float32, len(batch))
		for _, d := range w.Data {
			if d.Index < 0 || d.Index >= len(batch) || vecs[d.Index] != nil || len(d.Embedding) == 0 {
				return nil, fmt.Errorf("%w: %d texts sent, an entry with index %d and %d values received", ErrEmbedding, len(batch), d.Index, len(d.Embedding))
			}
			vecs[d.Index] = d.Embedding
		}
		for i, v := range vecs {
			if v == nil {
				return nil, fmt.Errorf("%w: no vector for text %d of %d", ErrEmbedding, start+i, len(texts))
			}
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// postTo sends one attempt of a JSON request to url with the provider's
// key and headers; stream asks for an event stream.
func (p *Provider) postTo(ctx context.Context, url string, body []byte, stream bool) (*http.Response, error) {
	key, err := p.cfg.apiKey()
	if err != nil {
		return nil, err
	}
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	if stream {
		h.Set("Accept", "text/event-stream")
	}
	for k, v := range p.cfg.Headers {
		h.Set(k, v)
	}
	return httpx.Post(ctx, httpx.Request{Provider: p.cfg.Name, Client: p.cfg.HTTPClient, URL: url, Header: h, Body: body, ParseError: parseError})
}
