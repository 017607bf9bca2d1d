package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/autoagent-go/autoagent/mcp"
)

// sdkSession connects the MCP SDK's own client to srv.
func sdkSession(t *testing.T, srv *mcp.Server, onChange func(string)) *sdk.ClientSession {
	t.Helper()
	a, b := net.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = srv.ServeIO(ctx, a, a) }()
	opts := &sdk.ClientOptions{
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { onChange("prompts") },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { onChange("resources") },
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, opts).Connect(ctx, &sdk.IOTransport{Reader: b, Writer: b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestServerPromptsAndResources(t *testing.T) {
	srv := mcp.NewServer(mcp.ServerOptions{})
	changes := make(chan string, 16)
	cs := sdkSession(t, srv, func(what string) { changes <- what })
	ctx := t.Context()
	if res, err := cs.ListPrompts(ctx, nil); err != nil || len(res.Prompts) != 0 {
		t.Fatalf("prompts before any: %v %+v", err, res)
	}
	get := func(_ context.Context, args map[string]string) (json.RawMessage, error) {
		return json.RawMessage(`{"messages":[{"role":"user","content":{"type":"text","text":"hi ` + args["who"] + `"}}]}`), nil
	}
	err := srv.SetPrompts([]mcp.Prompt{
		{Definition: json.RawMessage(`{"name":"hi","arguments":[{"name":"who","required":true}]}`), Get: get,
			Complete: func(context.Context, json.RawMessage) (json.RawMessage, error) {
				return json.RawMessage(`{"completion":{"values":["ada","alan"]}}`), nil
			}},
		{Definition: json.RawMessage(`{"description":"no name"}`), Get: get},
		{Definition: json.RawMessage(`{"name":"hi"}`), Get: get},
	})
	if !errors.Is(err, mcp.ErrToolRefused) || !strings.Contains(err.Error(), "prompt 1") || !strings.Contains(err.Error(), `two prompts are named "hi"`) {
		t.Errorf("SetPrompts: %v", err)
	}
	waitFor(t, "the prompt list to change", func() bool { return len(changes) > 0 })
	got, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "hi", Arguments: map[string]string{"who": "ada"}})
	if err != nil || got.Messages[0].Content.(*sdk.TextContent).Text != "hi ada" {
		t.Errorf("GetPrompt: %v %+v", err, got)
	}
	comp, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "hi"}, Argument: sdk.CompleteParamsArgument{Name: "who", Value: "a"}})
	if err != nil || !slices.Equal(comp.Completion.Values, []string{"ada", "alan"}) {
		t.Errorf("Complete: %v %+v", err, comp)
	}
	comp, err = cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "other"}, Argument: sdk.CompleteParamsArgument{Name: "x"}})
	if err != nil || len(comp.Completion.Values) != 0 {
		t.Errorf("Complete of an unknown prompt: %v %+v", err, comp)
	}

	read := func(_ context.Context, uri string) (json.RawMessage, error) {
		return json.RawMessage(`{"contents":[{"uri":"` + uri + `","text":"at ` + uri + `"}]}`), nil
	}
	if err := srv.SetResources([]mcp.Resource{
		{Definition: json.RawMessage(`{"uri":"note://a","name":"a"}`), Read: read},
		{Definition: json.RawMessage(`{"uriTemplate":"note://{id}","name":"note"}`), Template: true, Read: read},
	}); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"note://a", "note://b"} {
		r, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil || r.Contents[0].Text != "at "+uri {
			t.Errorf("ReadResource(%s): %v %+v", uri, err, r)
		}
	}
	// Withdrawn, they are gone; an unchanged set notifies nothing.
	if err := srv.SetResources(nil); err != nil {
		t.Fatal(err)
	}
	if r, err := cs.ListResources(ctx, nil); err != nil || len(r.Resources) != 0 {
		t.Errorf("resources after withdrawal: %v %+v", err, r)
	}
	if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: "note://a"}); err == nil {
		t.Error("a withdrawn resource was read")
	}
	if err := srv.SetResources([]mcp.Resource{{Definition: json.RawMessage(`{"uri":"x"}`), Read: read}}); !errors.Is(err, mcp.ErrToolRefused) {
		t.Errorf("a resource without a name: %v", err)
	}
}
