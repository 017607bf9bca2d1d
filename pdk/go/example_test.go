package pdk_test

import (
	"context"
	"fmt"
	"strings"

	pdk "github.com/autoagent-go/autoagent/pdk/go"
)

type ShoutIn struct {
	Text string `json:"text" jsonschema:"the text to shout"`
}

// A tool is a Go function; Call runs it as the host would, so it can be
// tested with `go test` on the developer's machine.
func ExampleNewTool() {
	pdk.Register(pdk.NewTool("shout", "Upper-cases text.",
		func(_ context.Context, in ShoutIn) (string, error) {
			return strings.ToUpper(in.Text), nil
		}))

	fmt.Println(string(pdk.Call([]byte(`{"params":{"name":"shout","arguments":{"text":"hello"}}}`))))
	fmt.Println(string(pdk.Call([]byte(`{"params":{"name":"shout","arguments":{"txt":"hello"}}}`))))
	// Output:
	// {"content":[{"type":"text","text":"HELLO"}]}
	// {"content":[{"type":"text","text":"invalid arguments: txt: unknown property (not in the schema)"}],"isError":true}
}
