package autoagent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/serve"
)

// serve.New serves a runtime's agent and session store.
func TestHandlerServesTheRuntime(t *testing.T) {
	ctx := context.Background()
	rt, err := autoagent.New(ctx, autoagent.Config{
		LLM:      scripted.NewWithOptions(scripted.Options{PerConversation: true}, scripted.Turn{Text: "served"}),
		Sessions: openSessions(t, filepath.Join(t.TempDir(), "sessions.db")),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	h, err := serve.New(serve.Options{Dir: t.TempDir(), Agent: rt.Agent(), Sessions: rt.Sessions()})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	hs := httptest.NewServer(h)
	defer hs.Close()
	resp, err := http.Post(hs.URL+"/v1/sessions/ada/s/runs", "application/json", strings.NewReader(`{"prompt": "hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var run struct {
		Status string
		Result struct{ Output string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&run); err != nil || resp.StatusCode != 200 || run.Status != "completed" || run.Result.Output != "served" {
		t.Fatalf("%d %+v %v", resp.StatusCode, run, err)
	}
	if info, err := rt.Sessions().Info(ctx, autoagent.SessionKey{User: "ada", Session: "s"}); err != nil || info.Messages != 2 {
		t.Fatalf("the runtime's session store: %+v %v", info, err)
	}
}
