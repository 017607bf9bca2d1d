package serve_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/autoagent-go/autoagent/loop"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/serve"
)

// A run started over HTTP, synchronously: the answer is the run.
func ExampleNew() {
	srv, err := serve.New(serve.Options{Agent: &loop.Agent{Provider: scripted.New(scripted.Turn{Text: "hello"})}})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	hs := httptest.NewServer(srv)
	defer hs.Close()
	resp, err := http.Post(hs.URL+"/v1/runs", "application/json", strings.NewReader(`{"prompt": "say hello"}`))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var run struct {
		Status string
		Result struct{ Output string }
	}
	json.NewDecoder(resp.Body).Decode(&run)
	fmt.Println(run.Status, run.Result.Output)
	// Output: completed hello
}
