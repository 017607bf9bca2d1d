package routing_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/openai"
	"github.com/autoagent-go/autoagent/providers/routing"
)

// server is an OpenAI-compatible stand-in that answers with its name and
// says whether the request it got carried an image.
func server(name string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen := "no image"
		if bytes.Contains(body, []byte(`"image_url"`)) {
			seen = "an image"
		}
		fmt.Fprintf(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, name+" saw "+seen)
	}))
}

func Example() {
	textSrv, visionSrv := server("text model"), server("vision model")
	defer textSrv.Close()
	defer visionSrv.Close()
	text, err := openai.Compatible(textSrv.URL+"/v1", openai.Options{Model: "small"})
	if err != nil {
		log.Fatal(err)
	}
	vision, err := openai.Compatible(visionSrv.URL+"/v1", openai.Options{Model: "vl"})
	if err != nil {
		log.Fatal(err)
	}
	p, err := routing.New(routing.Options{Default: text, Vision: vision})
	if err != nil {
		log.Fatal(err)
	}

	screenshot := llm.Message{Role: llm.RoleUser, Parts: []llm.Part{
		llm.TextPart("What does this screen say?"),
		llm.ImagePart("image/png", []byte("\x89PNG\r\n\x1a\n...")),
	}}
	history := []llm.Message{screenshot}
	resp, err := p.Complete(context.Background(), &llm.Request{Messages: history})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Message.Text())

	// The next turn is text only: it goes to the text model, and the past
	// screenshot is stripped from what that model is sent.
	history = append(history, resp.Message, llm.UserText("Thanks. Summarise it in one line."))
	resp, err = p.Complete(context.Background(), &llm.Request{Messages: history})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Message.Text())
	// Output:
	// vision model saw an image
	// text model saw no image
}
