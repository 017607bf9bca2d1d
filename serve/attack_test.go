package serve_test

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/serve"
)

// Our attack: the same decision posted 20 times at once acts once.
func TestConcurrentDecisionsActOnce(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, serve.Options{Dir: dir}, scriptOf(call("echo", `{"text":"hi"}`), scripted.Turn{Text: "said hi"}))
	id := e.start("say hi")
	callID := pendingIDs(e.waitStatus(id, serve.StatusAwaitingApproval))[0]
	var wg sync.WaitGroup
	codes := make(chan int, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes <- e.do("POST", "/v1/runs/"+id+"/decisions", decisions(callID, true, "")).status
		}()
	}
	wg.Wait()
	close(codes)
	accepted := 0
	for c := range codes {
		switch c {
		case http.StatusAccepted:
			accepted++
		case http.StatusConflict:
		default:
			t.Fatalf("a decision answered %d", c)
		}
	}
	if accepted != 1 {
		t.Fatalf("%d decisions accepted, want 1", accepted)
	}
	run := e.waitStatus(id, serve.StatusCompleted)
	b, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if n := strings.Count(string(b), `"action":"decide"`); n != 1 {
		t.Fatalf("%d decisions in the audit log, want 1", n)
	}
	if msgs := run["result"].(map[string]any)["messages"]; strings.Count(strings.ReplaceAll(toJSON(t, msgs), `\"`, `"`), "echo:hi") != 1 {
		t.Fatalf("the call ran other than once: %s", toJSON(t, msgs))
	}
}

// Our attack: event streams are bounded in number; the one over the
// bound is told to come back.
func TestStreamsBounded(t *testing.T) {
	e := newEnv(t, serve.Options{MaxStreams: 1}, scriptOf(call("echo", `{"text":"hi"}`), scripted.Turn{Text: "done"}))
	id := e.start("x")
	e.waitStatus(id, serve.StatusAwaitingApproval)
	resp, err := http.Get(e.http.URL + "/v1/runs/" + id + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// Read the first event: the stream is open, and stays open.
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && sc.Text() != "" {
	}
	// The second is refused at once; were it served, the answer would
	// be a stream that stays open, cut by the client's time limit.
	client := &http.Client{Timeout: 30 * time.Second}
	second, err := client.Get(e.http.URL + "/v1/runs/" + id + "/events")
	if err != nil {
		t.Fatalf("a second stream: %v", err)
	}
	second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable || second.Header.Get("Retry-After") == "" {
		t.Fatalf("a second stream: %d, want 503 with Retry-After", second.StatusCode)
	}
}

// Our attack: a run's events are bounded; a client starting before the
// kept ones is told what it missed.
func TestEventsBoundedAndTruncated(t *testing.T) {
	model := scripted.NewWithOptions(scripted.Options{PerConversation: true, ForgetRequests: true, ChunkSize: 1}, scripted.Turn{Text: "abcdefghij"})
	e := newEnv(t, serve.Options{MaxEvents: 4}, model)
	r := e.must(http.StatusOK, "POST", "/v1/runs", `{"prompt": "x"}`)
	evs := readSSE(t, e.http.URL+"/v1/runs/"+r.body["id"].(string)+"/events")
	if len(evs) != 5 || evs[0].typ != "truncated" || !strings.Contains(evs[0].data, "first_seq") || evs[4].typ != "status" {
		t.Fatalf("events: %v", evs)
	}
}
