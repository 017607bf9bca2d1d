package serve_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/internal/syncbuf"
	"github.com/autoagent-go/autoagent/providers/scripted"
	"github.com/autoagent-go/autoagent/serve"
)

const hookSecret = "webhook-secret-0123456789abcdef"

// delivery is one request a receiver got.
type delivery struct {
	header http.Header
	body   []byte
}

// receiver is a webhook receiver answering each request with the next
// status of answers (200 once they are spent).
type receiver struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     []delivery
	answers []int
	arrived chan struct{}
}

func newReceiver(t *testing.T, answers ...int) *receiver {
	rc := &receiver{answers: answers, arrived: make(chan struct{}, 100)}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, delivery{r.Header.Clone(), b})
		status := http.StatusOK
		if len(rc.answers) > 0 {
			status, rc.answers = rc.answers[0], rc.answers[1:]
		}
		rc.mu.Unlock()
		w.WriteHeader(status)
		rc.arrived <- struct{}{}
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// wait waits for n requests (bounded: a minute, for a loaded machine).
func (rc *receiver) wait(t *testing.T, n int) []delivery {
	t.Helper()
	for {
		rc.mu.Lock()
		got := append([]delivery(nil), rc.got...)
		rc.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-rc.arrived:
		case <-time.After(time.Minute):
			t.Fatalf("%d notifications, want %d", len(got), n)
		}
	}
}

// signedBy checks d's signature as a receiver would, computed here from
// the secret: HMAC-SHA256 over the timestamp header, ".", the body.
func signedBy(t *testing.T, d delivery, secret string) {
	t.Helper()
	ts := d.header.Get("X-Autoagent-Timestamp")
	sent, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(sent, 0)) > time.Hour {
		t.Fatalf("timestamp %q", ts)
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(d.body)))
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if got := d.header.Get("X-Autoagent-Signature"); got != want {
		t.Fatalf("signature %q, want %q", got, want)
	}
}

func payload(t *testing.T, d delivery) (typ string, run map[string]any) {
	t.Helper()
	var v struct {
		ID   string
		Type string
		Run  map[string]any
	}
	if err := json.Unmarshal(d.body, &v); err != nil || v.ID == "" || v.ID != d.header.Get("X-Autoagent-Delivery") {
		t.Fatalf("notification %s (delivery %q): %v", d.body, d.header.Get("X-Autoagent-Delivery"), err)
	}
	return v.Type, v.Run
}

// A run that awaits a decision, then ends, is notified twice, signed.
func TestWebhookNotifiesDecisionsAndEnds(t *testing.T) {
	rc := newReceiver(t)
	e := newEnv(t, serve.Options{Webhook: serve.Webhook{URL: rc.srv.URL + "/hook", Secret: hookSecret}},
		scriptOf(call("echo", `{"text":"hi"}`), scripted.Turn{Text: "said hi"}))
	id := e.start("say hi")
	got := rc.wait(t, 1)
	signedBy(t, got[0], hookSecret)
	typ, run := payload(t, got[0])
	if typ != "run.awaiting_approval" || run["id"] != id || run["status"] != "awaiting_approval" || len(run["pending"].([]any)) != 1 {
		t.Fatalf("first notification: %s", got[0].body)
	}
	callID := run["pending"].([]any)[0].(map[string]any)["call_id"].(string)
	e.must(http.StatusAccepted, "POST", "/v1/runs/"+id+"/decisions", decisions(callID, true, ""))
	got = rc.wait(t, 2)
	signedBy(t, got[1], hookSecret)
	typ, run = payload(t, got[1])
	if typ != "run.ended" || run["id"] != id || run["status"] != "completed" || run["output"] != "said hi" {
		t.Fatalf("second notification: %s", got[1].body)
	}
	// The receiver's check: VerifyWebhook takes it, and refuses it
	// changed, signed with another secret, or replayed late.
	now := time.Now()
	if err := serve.VerifyWebhook(hookSecret, got[1].header, got[1].body, 5*time.Minute, now); err != nil {
		t.Fatalf("verify: %v", err)
	}
	changed := bytes.Replace(got[1].body, []byte("said hi"), []byte("said no"), 1)
	other := got[1].header.Clone()
	other.Set("X-Autoagent-Timestamp", strconv.FormatInt(now.Unix()+1, 10))
	for name, c := range map[string]struct {
		h      http.Header
		body   []byte
		secret string
		at     time.Time
	}{
		"body changed":      {got[1].header, changed, hookSecret, now},
		"timestamp changed": {other, got[1].body, hookSecret, now},
		"another secret":    {got[1].header, got[1].body, hookSecret + "x", now},
		"replayed late":     {got[1].header, got[1].body, hookSecret, now.Add(time.Hour)},
		"no timestamp":      {http.Header{"X-Autoagent-Signature": got[1].header["X-Autoagent-Signature"]}, got[1].body, hookSecret, now},
	} {
		if err := serve.VerifyWebhook(c.secret, c.h, c.body, 5*time.Minute, c.at); !errors.Is(err, serve.ErrWebhookSignature) {
			t.Errorf("%s: %v, want ErrWebhookSignature", name, err)
		}
	}
	waitStats(t, e.srv, func(st serve.WebhookStats) bool { return st.Delivered == 2 })
	if st := e.srv.WebhookStats(); st.Failed != 0 || st.Dropped != 0 || st.Retries != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// A 500 is retried (the same delivery, signed again); a 400 is not.
func TestWebhookRetries(t *testing.T) {
	rc := newReceiver(t, http.StatusInternalServerError, http.StatusServiceUnavailable)
	e := newEnv(t, serve.Options{Webhook: serve.Webhook{URL: rc.srv.URL, Secret: hookSecret, Backoff: time.Millisecond}},
		scriptOf(scripted.Turn{Text: "done"}))
	e.must(http.StatusOK, "POST", "/v1/runs", `{"prompt": "x"}`)
	got := rc.wait(t, 3)
	for _, d := range got {
		signedBy(t, d, hookSecret)
	}
	if id := got[0].header.Get("X-Autoagent-Delivery"); id == "" || got[1].header.Get("X-Autoagent-Delivery") != id || got[2].header.Get("X-Autoagent-Delivery") != id {
		t.Fatalf("the retries are not one delivery: %v", got)
	}
	waitStats(t, e.srv, func(st serve.WebhookStats) bool { return st.Delivered == 1 && st.Retries == 2 })

	bad := newReceiver(t, http.StatusBadRequest)
	var notes syncbuf.Buffer
	e2 := newEnv(t, serve.Options{Notes: &notes, Webhook: serve.Webhook{URL: bad.srv.URL, Secret: hookSecret, Backoff: time.Millisecond}},
		scriptOf(scripted.Turn{Text: "done"}))
	e2.must(http.StatusOK, "POST", "/v1/runs", `{"prompt": "x"}`)
	bad.wait(t, 1)
	waitStats(t, e2.srv, func(st serve.WebhookStats) bool { return st.Failed == 1 })
	if st := e2.srv.WebhookStats(); st.Retries != 0 || st.Delivered != 0 {
		t.Fatalf("a 400 was retried: %+v", st)
	}
	if !strings.Contains(notes.String(), "answered 400") {
		t.Fatalf("notes: %q", notes.String())
	}
}

// Our attack: a receiver that redirects does not get the signed body
// sent elsewhere: the 3xx ends the delivery.
func TestWebhookRedirectNotFollowed(t *testing.T) {
	elsewhere := newReceiver(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.srv.URL, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	e := newEnv(t, serve.Options{Webhook: serve.Webhook{URL: redirect.URL, Secret: hookSecret, Backoff: time.Millisecond}},
		scriptOf(scripted.Turn{Text: "done"}))
	e.must(http.StatusOK, "POST", "/v1/runs", `{"prompt": "x"}`)
	waitStats(t, e.srv, func(st serve.WebhookStats) bool { return st.Failed+st.Delivered == 1 })
	if st := e.srv.WebhookStats(); st.Failed != 1 {
		t.Fatalf("a redirect delivered: %+v", st)
	}
	elsewhere.mu.Lock()
	defer elsewhere.mu.Unlock()
	if len(elsewhere.got) != 0 {
		t.Fatalf("the redirect was followed: %s", elsewhere.got[0].body)
	}
}

// Our attack: a receiver that never answers neither stalls nor fails the
// runs; the notifications over the queue's bound are dropped, counted
// and noted; Close still returns.
func TestWebhookHungReceiverDoesNotStallRuns(t *testing.T) {
	hang := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer hung.Close()
	defer close(hang)
	var notes syncbuf.Buffer
	e := newEnv(t, serve.Options{Notes: &notes, Webhook: serve.Webhook{URL: hung.URL, Secret: hookSecret, Timeout: time.Hour, Queue: 2}},
		scriptOf(scripted.Turn{Text: "done"}))
	const runs = 20
	done := make(chan string, 1)
	go func() {
		for i := range runs {
			// Synchronous: each answers once its run ended.
			if r := e.do("POST", "/v1/runs", fmt.Sprintf(`{"prompt": "run %d"}`, i)); r.body["status"] != "completed" {
				done <- fmt.Sprintf("run %d: %d %s", i, r.status, r.raw)
				return
			}
		}
		done <- ""
	}()
	// The bound only turns a stall into a failure rather than a hang: 20
	// runs of a scripted model take milliseconds.
	select {
	case msg := <-done:
		if msg != "" {
			t.Fatal(msg)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the runs stalled behind the hung receiver")
	}
	st := e.srv.WebhookStats()
	// One is being delivered (hung), two wait; the rest were dropped.
	if st.Dropped < runs-3 || st.Delivered != 0 {
		t.Fatalf("stats %+v, want at least %d dropped", st, runs-3)
	}
	if !strings.Contains(notes.String(), "dropped") {
		t.Fatalf("notes: %q", notes.String())
	}
	if err := e.srv.Close(); err != nil {
		t.Fatal(err)
	}
	if st := e.srv.WebhookStats(); st.Dropped+st.Failed != runs {
		t.Fatalf("after Close: %+v: every notification is counted", st)
	}
}

func TestWebhookOptions(t *testing.T) {
	for _, w := range []serve.Webhook{
		{URL: "http://127.0.0.1:1/hook"},
		{URL: "http://127.0.0.1:1/hook", Secret: "short"},
		{URL: "ftp://127.0.0.1/hook", Secret: hookSecret},
		{URL: "/hook", Secret: hookSecret},
		{URL: "http://user:pw@127.0.0.1/hook", Secret: hookSecret},
		{Secret: hookSecret},
		{URL: "http://127.0.0.1:1/hook", Secret: hookSecret, Timeout: -1},
	} {
		_, err := serve.New(serve.Options{Agent: newAgent(t, scriptOf(), newGate()), Webhook: w})
		if !errors.Is(err, serve.ErrOptions) {
			t.Errorf("%+v: %v, want ErrOptions", w, err)
		}
	}
}

func waitStats(t *testing.T, s *serve.Server, ok func(serve.WebhookStats) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok(s.WebhookStats()) {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v", s.WebhookStats())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
