package mcp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

// png1x1 is a 1x1 PNG, so image content has real bytes to carry.
var png1x1, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

func testTools() []tool.Tool {
	return []tool.Tool{
		echoTool(),
		fnTool("fails", `{"type":"object"}`, func(context.Context, tool.Call) (tool.Result, error) {
			return tool.Errorf("the disk is full"), nil
		}),
		fnTool("broken", `{"type":"object"}`, func(context.Context, tool.Call) (tool.Result, error) {
			return tool.Result{}, errBackend
		}),
		fnTool("picture", `{"type":"object"}`, func(context.Context, tool.Call) (tool.Result, error) {
			return tool.Result{Content: []tool.Content{
				{Type: "text", Text: "a red dot"},
				{Type: "image", Data: base64.StdEncoding.EncodeToString(png1x1), MIMEType: "image/png"},
			}}, nil
		}),
		fnTool("weather", `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`,
			func(_ context.Context, c tool.Call) (tool.Result, error) {
				var in struct{ City string }
				if err := json.Unmarshal(c.Arguments, &in); err != nil {
					return tool.Result{}, err
				}
				return tool.JSON(map[string]any{"city": in.City, "celsius": 21})
			}),
	}
}

func TestClientMountsServerTools(t *testing.T) {
	srv := mcp.NewServer(mcp.ServerOptions{Name: "test-server", Version: "1.2.3", Instructions: "Use echo."})
	if err := srv.SetTools(testTools()); err != nil {
		t.Fatal(err)
	}
	c := pipe(t, srv, mcp.ClientOptions{Prefix: "srv_"})

	info := c.ServerInfo()
	if info.Name != "test-server" || info.Version != "1.2.3" || info.Instructions != "Use echo." || info.ProtocolVersion != "2025-11-25" {
		t.Errorf("ServerInfo = %+v", info)
	}
	// The Go SDK's server lists tools sorted by name; the client keeps
	// the server's order.
	want := []string{"srv_broken", "srv_echo", "srv_fails", "srv_picture", "srv_weather"}
	if got := toolNames(c.Tools()); !slices.Equal(got, want) {
		t.Fatalf("tools = %v, want %v", got, want)
	}
	echo, _ := c.Tool("srv_echo")
	var gotSchema, wantSchema any
	_ = json.Unmarshal(echo.Spec().InputSchema, &gotSchema)
	_ = json.Unmarshal(echoTool().Spec().InputSchema, &wantSchema)
	if diff := cmp.Diff(wantSchema, gotSchema); diff != "" {
		t.Errorf("the mounted schema differs from the served tool's (-want +got):\n%s", diff)
	}
	if echo.Spec().Description != "Echoes msg." {
		t.Errorf("description = %q", echo.Spec().Description)
	}

	t.Run("text", func(t *testing.T) {
		res := mustCall(t, echo, `{"msg":"héllo","times":2}`)
		if res.IsError || res.Text() != "héllo héllo" {
			t.Errorf("echo = %+v", res)
		}
	})
	t.Run("arguments are validated before they are sent", func(t *testing.T) {
		res := mustCall(t, echo, `{"msg":42}`)
		if !res.IsError || !strings.Contains(res.Text(), "msg") {
			t.Errorf("a wrong argument type: %+v, want an error result naming msg", res)
		}
		res = mustCall(t, echo, `{}`)
		if !res.IsError || !strings.Contains(res.Text(), "msg") || !strings.Contains(res.Text(), "required") {
			t.Errorf("a missing argument: %+v, want an error result naming msg", res)
		}
	})
	t.Run("tool failure is an error result", func(t *testing.T) {
		fails, _ := c.Tool("srv_fails")
		res := mustCall(t, fails, `{}`)
		if !res.IsError || res.Text() != "the disk is full" {
			t.Errorf("fails = %+v", res)
		}
	})
	t.Run("a tool's infrastructure error reaches the client as an error result", func(t *testing.T) {
		broken, _ := c.Tool("srv_broken")
		res := mustCall(t, broken, `{}`)
		if !res.IsError || !strings.Contains(res.Text(), errBackend.Error()) {
			t.Errorf("broken = %+v", res)
		}
	})
	t.Run("image", func(t *testing.T) {
		pic, _ := c.Tool("srv_picture")
		res := mustCall(t, pic, ``)
		if len(res.Content) != 2 || res.Content[1].Type != "image" || res.Content[1].MIMEType != "image/png" {
			t.Fatalf("picture = %+v", res)
		}
		data, err := base64.StdEncoding.DecodeString(res.Content[1].Data)
		if err != nil || !slices.Equal(data, png1x1) {
			t.Errorf("the image bytes did not survive the round trip: %v", err)
		}
	})
	t.Run("structured content", func(t *testing.T) {
		w, _ := c.Tool("srv_weather")
		res := mustCall(t, w, `{"city":"Oslo"}`)
		var got map[string]any
		if err := json.Unmarshal(res.StructuredContent, &got); err != nil {
			t.Fatalf("structured content %q: %v", res.StructuredContent, err)
		}
		if got["city"] != "Oslo" || got["celsius"] != float64(21) {
			t.Errorf("structured content = %v", got)
		}
	})
	t.Run("parallel calls", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				msg := strings.Repeat("x", i+1)
				res, err := echo.Call(context.Background(), tool.Call{Arguments: json.RawMessage(`{"msg":"` + msg + `"}`)})
				if err != nil || res.Text() != msg {
					t.Errorf("call %d: %+v, %v", i, res, err)
				}
			})
		}
		wg.Wait()
	})
}

func TestClientFlags(t *testing.T) {
	closed := tool.WithFlags(fnTool("calc", `{"type":"object"}`, func(context.Context, tool.Call) (tool.Result, error) {
		return tool.Text("4"), nil
	}), tool.Flags{Idempotent: true})
	web := tool.WithFlags(fnTool("fetch", `{"type":"object"}`, func(context.Context, tool.Call) (tool.Result, error) {
		return tool.Text("<html>"), nil
	}), tool.Flags{Untrusted: true, Egress: true})
	srv := mcp.NewServer(mcp.ServerOptions{})
	if err := srv.SetTools([]tool.Tool{closed, web}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		opts       mcp.ClientOptions
		calc, fetc tool.Flags
	}{
		{"default: untrusted, annotations ignored", mcp.ClientOptions{},
			tool.Flags{Untrusted: true, Permissions: []string{"mcp"}},
			tool.Flags{Untrusted: true, Permissions: []string{"mcp"}}},
		{"trusted: annotations believed", mcp.ClientOptions{Trusted: true, Permissions: []string{"network"}},
			tool.Flags{Idempotent: true, Permissions: []string{"mcp", "network"}},
			tool.Flags{Untrusted: true, Permissions: []string{"mcp", "network"}}},
		// The server's word never outweighs the host's: a tool that can
		// send data out is not idempotent (issue 38).
		{"trusted with egress: never idempotent", mcp.ClientOptions{Trusted: true, Egress: true},
			tool.Flags{Egress: true, Permissions: []string{"mcp"}},
			tool.Flags{Untrusted: true, Egress: true, Permissions: []string{"mcp"}}},
		{"egress", mcp.ClientOptions{Egress: true},
			tool.Flags{Untrusted: true, Egress: true, Permissions: []string{"mcp"}},
			tool.Flags{Untrusted: true, Egress: true, Permissions: []string{"mcp"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := pipe(t, srv, tc.opts)
			calc, _ := c.Tool("calc")
			fetch, _ := c.Tool("fetch")
			if diff := cmp.Diff(tc.calc, tool.FlagsOf(calc)); diff != "" {
				t.Errorf("calc flags (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.fetc, tool.FlagsOf(fetch)); diff != "" {
				t.Errorf("fetch flags (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClientIncludeExcludeAndNames(t *testing.T) {
	srv := mcp.NewServer(mcp.ServerOptions{})
	ok := func(context.Context, tool.Call) (tool.Result, error) { return tool.Text("ok"), nil }
	if err := srv.SetTools([]tool.Tool{
		fnTool("a", `{}`, ok), fnTool("b", `{}`, ok), fnTool("c", `{}`, ok),
	}); err != nil {
		t.Fatal(err)
	}
	c := pipe(t, srv, mcp.ClientOptions{Include: []string{"a", "b"}, Exclude: []string{"b"}, Prefix: "gh."})
	if got := toolNames(c.Tools()); !slices.Equal(got, []string{"gh_a"}) {
		t.Errorf("tools = %v, want [gh_a] (include a,b; exclude b; the prefix's dot made acceptable)", got)
	}
	res := mustCall(t, c.Tools()[0], `{}`)
	if res.Text() != "ok" {
		t.Errorf("gh_a called the wrong server tool: %+v", res)
	}
	if c.Err() != nil {
		t.Errorf("Err = %v", c.Err())
	}
}

func TestClientListChanged(t *testing.T) {
	srv := mcp.NewServer(mcp.ServerOptions{})
	if err := srv.SetTools([]tool.Tool{echoTool()}); err != nil {
		t.Fatal(err)
	}
	changes := make(chan mcp.Change, 10)
	c := pipe(t, srv, mcp.ClientOptions{OnChange: func(ch mcp.Change) { changes <- ch }})
	if ch := <-changes; !slices.Equal(ch.Added, []string{"echo"}) {
		t.Errorf("the first change = %+v, want the initial tool set", ch)
	}
	reg, _ := tool.NewRegistry(fnTool("host_tool", `{}`, nil))
	if err := c.Publish(reg); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(reg.Tools()); !slices.Equal(got, []string{"host_tool", "echo"}) {
		t.Fatalf("registry = %v", got)
	}

	weather := testTools()[4]
	if err := srv.SetTools([]tool.Tool{echoTool(), weather}); err != nil {
		t.Fatal(err)
	}
	ch := <-changes
	if !slices.Equal(ch.Added, []string{"weather"}) || len(ch.Removed)+len(ch.Replaced) != 0 || ch.Err != nil {
		t.Errorf("change = %+v, want weather added (echo is a new value with the same definition: no change)", ch)
	}
	if got := toolNames(reg.Tools()); !slices.Equal(got, []string{"host_tool", "echo", "weather"}) {
		t.Errorf("registry after the change = %v", got)
	}

	if err := srv.SetTools([]tool.Tool{weather}); err != nil {
		t.Fatal(err)
	}
	ch = <-changes
	if !slices.Equal(ch.Removed, []string{"echo"}) || len(ch.Added) != 0 {
		t.Errorf("change = %+v, want echo removed", ch)
	}
	if got := toolNames(reg.Tools()); !slices.Equal(got, []string{"host_tool", "weather"}) {
		t.Errorf("registry after the removal = %v", got)
	}
}

func TestClientAfterClose(t *testing.T) {
	srv := mcp.NewServer(mcp.ServerOptions{})
	_ = srv.SetTools([]tool.Tool{echoTool()})
	c := pipe(t, srv, mcp.ClientOptions{})
	echo, _ := c.Tool("echo")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := echo.Call(context.Background(), tool.Call{Arguments: json.RawMessage(`{"msg":"x"}`)}); !errors.Is(err, mcp.ErrClosed) {
		t.Errorf("a call after Close: %v, want ErrClosed", err)
	}
	if _, err := c.Refresh(context.Background()); !errors.Is(err, mcp.ErrClosed) {
		t.Errorf("Refresh after Close: %v, want ErrClosed", err)
	}
}

func TestServerRefusesWhatMCPCannotCarry(t *testing.T) {
	ok := func(context.Context, tool.Call) (tool.Result, error) { return tool.Text("ok"), nil }
	srv := mcp.NewServer(mcp.ServerOptions{})
	err := srv.SetTools([]tool.Tool{
		fnTool("scalar", `{"type":"string"}`, ok),
		fnTool("twice", `{}`, ok),
		fnTool("twice", `{}`, ok),
		fnTool("untyped", `{"properties":{"q":{"type":"string"}}}`, ok),
		fnTool("garbage", `[1,2]`, ok),
	})
	if !errors.Is(err, mcp.ErrToolRefused) {
		t.Fatalf("SetTools: %v, want ErrToolRefused", err)
	}
	for _, name := range []string{"scalar", "twice", "garbage"} {
		if !strings.Contains(err.Error(), `"`+name+`"`) && !strings.Contains(err.Error(), name+":") {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
	c := pipe(t, srv, mcp.ClientOptions{})
	if got := toolNames(c.Tools()); !slices.Equal(got, []string{"untyped"}) {
		t.Fatalf("served = %v, want only untyped", got)
	}
	u, _ := c.Tool("untyped")
	var schema map[string]any
	_ = json.Unmarshal(u.Spec().InputSchema, &schema)
	if schema["type"] != "object" || schema["properties"] == nil {
		t.Errorf("a schema without a type is served as an object schema, keeping its properties: %v", schema)
	}
}

func TestClientStaleToolAndTimeouts(t *testing.T) {
	started := make(chan struct{}, 1) // a call of block has reached the server
	block := fnTool("block", `{"type":"object"}`, func(ctx context.Context, _ tool.Call) (tool.Result, error) {
		select {
		case started <- struct{}{}:
		default:
		}
		<-ctx.Done() // the client's cancellation reaches the server
		return tool.Result{}, ctx.Err()
	})
	// No wait for block's calls at the end of a session: they are
	// answered only when it ends.
	srv := mcp.NewServer(mcp.ServerOptions{DrainTimeout: -1})
	if err := srv.SetTools([]tool.Tool{echoTool(), block}); err != nil {
		t.Fatal(err)
	}
	changes := make(chan mcp.Change, 10)
	c := pipe(t, srv, mcp.ClientOptions{Timeout: 300 * time.Millisecond, OnChange: func(ch mcp.Change) { changes <- ch }})
	<-changes

	t.Run("the client's timeout is an infrastructure error", func(t *testing.T) {
		b, _ := c.Tool("block")
		_, err := b.Call(context.Background(), tool.Call{Arguments: json.RawMessage(`{}`)})
		var se *mcp.ServerError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "no answer within 300ms") {
			t.Errorf("a call the server does not answer: %v, want a ServerError saying so", err)
		}
	})
	t.Run("the caller's cancellation is the context's error", func(t *testing.T) {
		// A client of its own without a timeout: on a loaded machine the
		// call may take longer than 300ms to reach the server, and the
		// timeout must not be what ends it.
		patient := pipe(t, srv, mcp.ClientOptions{})
		b, _ := patient.Tool("block")
		select {
		case <-started: // the previous subtest's call
		default:
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-started; cancel() }()
		_, err := b.Call(ctx, tool.Call{Arguments: json.RawMessage(`{}`)})
		var se *mcp.ServerError
		if !errors.Is(err, context.Canceled) || errors.As(err, &se) {
			t.Errorf("a cancelled call: %v, want context.Canceled", err)
		}
	})
	t.Run("a tool the server no longer has is an error result", func(t *testing.T) {
		stale, _ := c.Tool("echo")
		if err := srv.SetTools([]tool.Tool{block}); err != nil {
			t.Fatal(err)
		}
		if ch := <-changes; !slices.Equal(ch.Removed, []string{"echo"}) {
			t.Fatalf("change = %+v", ch)
		}
		res, err := stale.Call(context.Background(), tool.Call{Arguments: json.RawMessage(`{"msg":"x"}`)})
		if err != nil || !res.IsError || !strings.Contains(res.Text(), "unknown tool") {
			t.Errorf("calling a withdrawn tool: %+v, %v; want an error result the model reads", res, err)
		}
	})
}

// A client listing while the server swaps its tool set sees the old set
// or the new one, never a set half changed: the server changes its list
// one tool at a time, and a loaded machine can notify (or a client can
// list) between two of them. Found when `autoagent mcp serve`'s hot
// reload showed a client one tool of five under load.
func TestClientNeverListsAHalfChangedSet(t *testing.T) {
	set := func(prefix string) []tool.Tool {
		var ts []tool.Tool
		for i := range 60 {
			ts = append(ts, fnTool(fmt.Sprintf("%s%02d", prefix, i), `{"type":"object"}`, nil))
		}
		return ts
	}
	a, b := set("a"), set("b")
	srv := mcp.NewServer(mcp.ServerOptions{})
	if err := srv.SetTools(a); err != nil {
		t.Fatal(err)
	}
	c := pipe(t, srv, mcp.ClientOptions{})
	stop := make(chan struct{})
	seen := make(chan string, 1)
	go func() {
		defer close(seen)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.Refresh(context.Background()); err != nil {
				seen <- "Refresh: " + err.Error()
				return
			}
			names := toolNames(c.Tools())
			if len(names) != 60 || names[0][0] != names[59][0] {
				seen <- fmt.Sprintf("a listing of %d tools: %v", len(names), names)
				return
			}
		}
	}()
	for i := range 40 {
		next := a
		if i%2 == 0 {
			next = b
		}
		if err := srv.SetTools(next); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if bad, ok := <-seen; ok {
		t.Fatalf("the client saw a half-changed set: %.300s", bad)
	}
}
