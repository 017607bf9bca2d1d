package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/mcp"
	"github.com/autoagent-go/autoagent/tool"
)

func TestStreamableHTTP(t *testing.T) {
	srv := mcp.NewServer(mcp.ServerOptions{Name: "http-server"})
	if err := srv.SetTools([]tool.Tool{echoTool()}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var auth []string
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		srv.ServeHTTP(w, r)
	}))
	hs := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
	})

	changes := make(chan mcp.Change, 10)
	c, err := mcp.Connect(context.Background(), mcp.ClientOptions{
		URL:      hs.URL + "/mcp?token=secret",
		Header:   http.Header{"Authorization": {"Bearer t0ken"}},
		OnChange: func(ch mcp.Change) { changes <- ch },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	<-changes // the initial set
	if c.ServerInfo().Name != "http-server" {
		t.Errorf("ServerInfo = %+v", c.ServerInfo())
	}
	echo, ok := c.Tool("echo")
	if !ok {
		t.Fatalf("tools = %v", toolNames(c.Tools()))
	}
	if res := mustCall(t, echo, `{"msg":"over http"}`); res.Text() != "over http" {
		t.Errorf("echo = %+v", res)
	}

	// The list change reaches the client on its event stream.
	if err := srv.SetTools([]tool.Tool{echoTool(), testTools()[1]}); err != nil {
		t.Fatal(err)
	}
	if ch := <-changes; !slices.Equal(ch.Added, []string{"fails"}) {
		t.Errorf("change = %+v, want fails added", ch)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(auth) == 0 || slices.ContainsFunc(auth, func(a string) bool { return a != "Bearer t0ken" }) {
		t.Errorf("Authorization headers seen by the server: %q", auth)
	}
}

func TestStreamableHTTPRefusesDNSRebinding(t *testing.T) {
	srv := mcp.NewServer(mcp.ServerOptions{})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		host string
		want int
	}{
		{"evil.example.com", http.StatusForbidden},
		{"", http.StatusOK}, // the listener's own 127.0.0.1:PORT
	} {
		req, _ := http.NewRequest("POST", hs.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Host %q: status %d, want %d", tc.host, resp.StatusCode, tc.want)
		}
	}
}

func TestStreamableHTTPErrorsNameNoSecret(t *testing.T) {
	hs := httptest.NewServer(http.NotFoundHandler())
	defer hs.Close()
	_, err := mcp.Connect(context.Background(), mcp.ClientOptions{URL: hs.URL + "/mcp?key=hunter2"})
	if err == nil {
		t.Fatal("Connect to a server that is not MCP succeeded")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the error shows the URL's query, which may hold a secret: %v", err)
	}
}

// TestStreamableHTTPSessionsBounded: a server serves at most MaxSessions
// HTTP sessions at once (a client asking for one more is answered 503
// until one ends), and closes a session idle for SessionTimeout (60 000
// sessions opened in 49 s grew a server to 872 MB: found by attacking our
// own sandbox).
func TestStreamableHTTPSessionsBounded(t *testing.T) {
	srv := mcp.NewServer(mcp.ServerOptions{MaxSessions: 2, SessionTimeout: 300 * time.Millisecond})
	if err := srv.SetTools([]tool.Tool{echoTool()}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
	})
	connect := func() (*mcp.Client, error) {
		return mcp.Connect(t.Context(), mcp.ClientOptions{URL: hs.URL})
	}
	var clients []*mcp.Client
	for range 2 {
		c, err := connect()
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	if c, err := connect(); err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
		if c != nil {
			c.Close()
		}
		t.Fatalf("a third session: %v, want it refused with 503", err)
	}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	// The two clients stay connected but idle: the server closes their
	// sessions, so a new one is served.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := connect()
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session served after the others ended: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
