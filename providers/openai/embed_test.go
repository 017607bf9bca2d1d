package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/autoagent-go/autoagent/internal/fixturetest"
	"github.com/autoagent-go/autoagent/providers/openai"
)

// TestEmbedReplaysRecordedTraffic replays langchaingo's recorded calls of
// OpenAI's embeddings endpoint: Embed must send what the client recorded
// sent (model, inputs, dimensions) to the same path with the key, and
// return the recorded vectors in order.
func TestEmbedReplaysRecordedTraffic(t *testing.T) {
	for _, file := range []string{
		"llms_openai_internal_openaiclient_testdata_TestClient_CreateEmbedding.httprr",
		"llms_openai_internal_openaiclient_testdata_TestClient_CreateEmbeddingWithDimensions.httprr",
		"embeddings_testdata_TestOpenaiEmbeddingsQueryVsDocuments.httprr",
	} {
		t.Run(file, func(t *testing.T) {
			ex := fixturetest.HTTPRR(t, "langchaingo/"+file)
			srv := fixturetest.NewServer(t, fixturetest.Answers(ex)...)
			for i, e := range ex {
				var sent struct {
					Model      string   `json:"model"`
					Input      []string `json:"input"`
					Dimensions int      `json:"dimensions"`
				}
				if err := json.Unmarshal([]byte(e.Request.Body), &sent); err != nil {
					t.Fatal(err)
				}
				var answer struct {
					Data []struct {
						Embedding []float32 `json:"embedding"`
					} `json:"data"`
				}
				if err := json.Unmarshal([]byte(e.Answer.Body), &answer); err != nil {
					t.Fatal(err)
				}
				p, err := openai.New(openai.Options{BaseURL: srv.URL + "/v1", APIKey: "test-api-key", EmbeddingModel: sent.Model, EmbeddingDimensions: sent.Dimensions})
				if err != nil {
					t.Fatal(err)
				}
				vecs, err := p.Embed(context.Background(), sent.Input)
				if err != nil {
					t.Fatal(err)
				}
				if len(vecs) != len(answer.Data) {
					t.Fatalf("exchange %d: %d vectors, the recording holds %d", i+1, len(vecs), len(answer.Data))
				}
				for j := range vecs {
					if !slices.Equal(vecs[j], answer.Data[j].Embedding) {
						t.Errorf("exchange %d: vector %d differs from the recording's", i+1, j)
					}
				}
				got := srv.Request(t, i)
				if got.Path != e.Request.Path || got.Method != e.Request.Method {
					t.Errorf("exchange %d: sent %s %s, recorded %s %s", i+1, got.Method, got.Path, e.Request.Method, e.Request.Path)
				}
				if h := got.Header.Get("Authorization"); h != e.Request.Header.Get("Authorization") {
					t.Errorf("exchange %d: Authorization %q, recorded %q", i+1, h, e.Request.Header.Get("Authorization"))
				}
				var a, b any
				json.Unmarshal([]byte(got.Body), &a)
				json.Unmarshal([]byte(e.Request.Body), &b)
				ja, _ := json.Marshal(a)
				jb, _ := json.Marshal(b)
				if string(ja) != string(jb) {
					t.Errorf("exchange %d: sent %s, recorded %s", i+1, ja, jb)
				}
			}
		})
	}
}

// TestEmbedRefusesAMismatchedAnswer: an answer without one vector per text
// is an error, never vectors shifted onto the wrong texts.
func TestEmbedRefusesAMismatchedAnswer(t *testing.T) {
	for name, body := range map[string]string{
		"too few":      `{"data":[{"index":0,"embedding":[1,2]}]}`,
		"index twice":  `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`,
		"one too many": `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[3,4]},{"index":0,"embedding":[5,6]}]}`,
		"out of range": `{"data":[{"index":0,"embedding":[1,2]},{"index":5,"embedding":[3,4]}]}`,
		"empty vector": `{"data":[{"index":0,"embedding":[1,2]},{"index":1,"embedding":[]}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			srv := fixturetest.NewServer(t, fixturetest.Answer{Body: body})
			p, _ := openai.New(openai.Options{BaseURL: srv.URL, APIKey: "k"})
			if _, err := p.Embed(context.Background(), []string{"a", "b"}); !errors.Is(err, openai.ErrEmbedding) {
				t.Errorf("err = %v, want ErrEmbedding", err)
			}
		})
	}
}
