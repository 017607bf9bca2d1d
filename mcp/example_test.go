package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"net/http/httptest"
	"os/exec"

	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"the city to look up"`
}

func weatherTool() tool.Tool {
	return tool.Must(tool.New("weather", "Current weather for a city.",
		func(_ context.Context, in weatherIn) (string, error) {
			return "sunny in " + in.City, nil
		}))
}

// A server and a client in one process, connected by a pipe: the client
// mounts the server's tools in a registry, under a prefix, as untrusted
// tools.
func Example() {
	ctx := context.Background()
	srv := mcp.NewServer(mcp.ServerOptions{Name: "weather-server"})
	if err := srv.SetTools([]tool.Tool{weatherTool()}); err != nil {
		log.Fatal(err)
	}
	serverEnd, clientEnd := net.Pipe()
	go srv.ServeIO(ctx, serverEnd, serverEnd)

	c, err := mcp.Connect(ctx, mcp.ClientOptions{Stream: clientEnd, Prefix: "wx_"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	reg := &tool.Registry{}
	if err := c.Publish(reg); err != nil {
		log.Fatal(err)
	}

	res, err := reg.Call(ctx, tool.Call{Name: "wx_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)})
	if err != nil {
		log.Fatal(err)
	}
	wx, _ := reg.Get("wx_weather")
	fmt.Println(c.ServerInfo().Name, reg.Specs()[0].Name, "untrusted:", tool.FlagsOf(wx).Untrusted)
	fmt.Println(res.Text())

	res, _ = reg.Call(ctx, tool.Call{Name: "wx_weather", Arguments: json.RawMessage(`{}`)})
	fmt.Println(res.IsError, res.Text())
	// Output:
	// weather-server wx_weather untrusted: true
	// sunny in Oslo
	// true invalid arguments: city: required property is missing
}

// Serving tools over streamable HTTP; the client follows the server's
// tool set as it changes.
func ExampleServer_ServeHTTP() {
	ctx := context.Background()
	srv := mcp.NewServer(mcp.ServerOptions{})
	hs := httptest.NewServer(srv) // in production: http.ListenAndServe("127.0.0.1:8080", mux) with mux.Handle("/mcp", srv)
	defer hs.Close()
	defer srv.Close()

	changed := make(chan mcp.Change, 2)
	c, err := mcp.Connect(ctx, mcp.ClientOptions{URL: hs.URL, OnChange: func(ch mcp.Change) { changed <- ch }})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println("tools at first:", len(c.Tools()))

	if err := srv.SetTools([]tool.Tool{weatherTool()}); err != nil {
		log.Fatal(err)
	}
	fmt.Println("added:", (<-changed).Added)
	// Output:
	// tools at first: 0
	// added: [weather]
}

// Mounting the tools of a server that runs as a subprocess, with one
// variable of the host's environment passed on.
func ExampleConnect() {
	npx, err := exec.LookPath("npx")
	if err != nil {
		log.Fatal(err)
	}
	c, err := mcp.Connect(context.Background(), mcp.ClientOptions{
		Command: []string{npx, "-y", "@modelcontextprotocol/server-github"},
		Env:     []string{"GITHUB_PERSONAL_ACCESS_TOKEN=" + "..."},
		Prefix:  "github_",
		Egress:  true, // its tools can write to GitHub
	})
	if err != nil {
		log.Fatal(err) // a *mcp.ServerError carries the server's stderr
	}
	defer c.Close()
	for _, t := range c.Tools() {
		fmt.Println(t.Spec().Name)
	}
}
