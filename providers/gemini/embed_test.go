package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/providers/gemini"
)

// TestEmbedReplaysRecordedTraffic replays langchaingo's recorded calls of
// batchEmbedContents: 3 texts in one request, and 105 texts, which the
// API takes 100 a request. Embed must send the texts the client sent, in
// the same batches, to the same method with the key in its header, and
// return the recorded vectors in order.
func TestEmbedReplaysRecordedTraffic(t *testing.T) {
	for _, file := range []string{
		"llms_googleai_testdata_TestGoogleAICreateEmbedding.httprr",
		"llms_googleai_testdata_TestGoogleAIBatchEmbedding.httprr",
	} {
		t.Run(file, func(t *testing.T) {
			ex := fixturetest.HTTPRR(t, "langchaingo/"+file)
			srv := fixturetest.NewServer(t, fixturetest.Answers(ex)...)
			type request struct {
				Requests []struct {
					Model   string `json:"model"`
					Content struct {
						Parts []struct {
							Text string `json:"text"`
						} `json:"parts"`
					} `json:"content"`
				} `json:"requests"`
			}
			var texts []string
			var want [][]float32
			var sent []request
			for _, e := range ex {
				var r request
				if err := json.Unmarshal([]byte(e.Request.Body), &r); err != nil {
					t.Fatal(err)
				}
				sent = append(sent, r)
				for _, q := range r.Requests {
					texts = append(texts, q.Content.Parts[0].Text)
				}
				var answer struct {
					Embeddings []struct {
						Values []float32 `json:"values"`
					} `json:"embeddings"`
				}
				if err := json.Unmarshal([]byte(e.Answer.Body), &answer); err != nil {
					t.Fatal(err)
				}
				for _, v := range answer.Embeddings {
					want = append(want, v.Values)
				}
			}
			model := strings.TrimPrefix(sent[0].Requests[0].Model, "models/")
			p, err := gemini.New(gemini.Options{BaseURL: srv.URL + "/v1beta", APIKey: "test-key", EmbeddingModel: model})
			if err != nil {
				t.Fatal(err)
			}
			vecs, err := p.Embed(context.Background(), texts)
			if err != nil {
				t.Fatal(err)
			}
			if len(vecs) != len(want) || len(vecs) != len(texts) {
				t.Fatalf("%d vectors for %d texts, the recording holds %d", len(vecs), len(texts), len(want))
			}
			for j := range vecs {
				if !slices.Equal(vecs[j], want[j]) {
					t.Errorf("vector %d differs from the recording's", j)
				}
			}
			for i, e := range ex {
				got := srv.Request(t, i)
				recPath, _, _ := strings.Cut(e.Request.Path, "?")
				if got.Path != recPath {
					t.Errorf("request %d: path %s, recorded %s", i+1, got.Path, recPath)
				}
				if got.Header.Get("X-Goog-Api-Key") != "test-key" || strings.Contains(got.Path, "key=") {
					t.Errorf("request %d: the key is not in the x-goog-api-key header alone", i+1)
				}
				var r request
				if err := json.Unmarshal([]byte(got.Body), &r); err != nil {
					t.Fatal(err)
				}
				if len(r.Requests) != len(sent[i].Requests) {
					t.Fatalf("request %d: %d texts, recorded %d", i+1, len(r.Requests), len(sent[i].Requests))
				}
				for j, q := range r.Requests {
					w := sent[i].Requests[j]
					if q.Model != w.Model || q.Content.Parts[0].Text != w.Content.Parts[0].Text {
						t.Errorf("request %d, text %d: sent %s %q, recorded %s %q", i+1, j, q.Model, q.Content.Parts[0].Text, w.Model, w.Content.Parts[0].Text)
					}
				}
			}
		})
	}
}

// TestEmbedRefusesAMismatchedAnswer: an answer without one vector per text
// is an error, never vectors shifted onto the wrong texts.
func TestEmbedRefusesAMismatchedAnswer(t *testing.T) {
	for name, body := range map[string]string{
		"too few":      `{"embeddings":[{"values":[1,2]}]}`,
		"empty vector": `{"embeddings":[{"values":[1,2]},{"values":[]}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := fixturetest.NewServer(t, fixturetest.Answer{Body: body})
			p, _ := gemini.New(gemini.Options{BaseURL: srv.URL, APIKey: "k"})
			if _, err := p.Embed(context.Background(), []string{"a", "b"}); !errors.Is(err, gemini.ErrEmbedding) {
				t.Errorf("err = %v, want ErrEmbedding", err)
			}
		})
	}
}
