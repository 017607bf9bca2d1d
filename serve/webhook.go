package serve

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Webhook configures the notifications a server sends: a POST to URL when
// a run awaits a decision and when it ends. The zero value sends none.
//
// Each body is JSON: {"id", "type", "time", "run"}, type
// "run.awaiting_approval" or "run.ended", run the run as GET /v1/runs
// lists it, with the answer ("output") once it completed. It is signed:
//
//	X-Autoagent-Timestamp: UNIX-SECONDS
//	X-Autoagent-Signature: sha256=HEX(HMAC-SHA256(Secret, TIMESTAMP + "." + BODY))
//
// The receiver recomputes the signature over the timestamp header, a dot
// and the raw body, compares it in constant time (VerifyWebhook), and
// refuses a timestamp older than it allows: a body captured in transit
// cannot be replayed later, nor its timestamp changed. The id (also in
// X-Autoagent-Delivery) is the same on every attempt of a delivery.
//
// Deliveries leave the runs alone: a run queues its notification and goes
// on. One goroutine sends them, each attempt bounded by Timeout; a
// network error, a 429 or a 5xx is retried (Retries times, waiting
// Backoff, doubled each time, at most a minute); another answer ends the
// delivery. When the queue is full the notification is dropped, counted
// (WebhookStats) and noted.
type Webhook struct {
	// URL receives the notifications (http or https).
	URL string
	// Secret keys the signature: at least 16 bytes.
	Secret string
	// Timeout bounds one attempt (default 10 s).
	Timeout time.Duration
	// Retries is how many times a failed attempt is retried (default 5;
	// -1 for none).
	Retries int
	// Backoff is the wait before the first retry (default 1 s).
	Backoff time.Duration
	// Queue bounds the notifications waiting (default 1024).
	Queue int
	// Client sends them (default: a client of its own, no redirects
	// followed: a redirect would send the body elsewhere).
	Client *http.Client
}

// The headers of a notification.
const (
	WebhookSignatureHeader = "X-Autoagent-Signature"
	WebhookTimestampHeader = "X-Autoagent-Timestamp"
	WebhookDeliveryHeader  = "X-Autoagent-Delivery"
)

// ErrWebhookSignature is returned by VerifyWebhook for a notification
// that is not signed with the secret, or is too old.
var ErrWebhookSignature = errors.New("serve: webhook signature does not verify")

// SignWebhook returns the X-Autoagent-Signature value of body sent at
// timestamp (unix seconds, as in X-Autoagent-Timestamp).
func SignWebhook(secret string, timestamp int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(strconv.AppendInt(nil, timestamp, 10))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// VerifyWebhook checks a notification received at now: its signature
// (from the headers h) over its body, and that its timestamp is at most
// maxAge old (and not from the future by more than maxAge).
func VerifyWebhook(secret string, h http.Header, body []byte, maxAge time.Duration, now time.Time) error {
	ts, err := strconv.ParseInt(h.Get(WebhookTimestampHeader), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: no %s", ErrWebhookSignature, WebhookTimestampHeader)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > maxAge || d < -maxAge {
		return fmt.Errorf("%w: sent at %d, now %d: older than %s", ErrWebhookSignature, ts, now.Unix(), maxAge)
	}
	want := SignWebhook(secret, ts, body)
	if !hmac.Equal([]byte(h.Get(WebhookSignatureHeader)), []byte(want)) {
		return ErrWebhookSignature
	}
	return nil
}

// WebhookStats counts the notifications of a server.
type WebhookStats struct {
	// Delivered were answered 2xx; Failed were given up (a permanent
	// answer or the retries spent); Dropped never queued (the queue was
	// full, or the server stopping); Retries counts the attempts after
	// the first.
	Delivered, Failed, Dropped, Retries int64
}

// notification is one queued delivery.
type notification struct {
	id   string
	body []byte
}

// notifier sends the notifications of a server, from one goroutine.
type notifier struct {
	cfg    Webhook
	client *http.Client
	queue  chan notification
	note   func(format string, args ...any)
	now    func() time.Time

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	closeOnce                           sync.Once
	closing                             atomic.Bool
	pending                             sync.WaitGroup // queued or being delivered
	delivered, failed, dropped, retries atomic.Int64
}

func checkWebhook(w Webhook) error {
	if w.URL == "" {
		if w.Secret != "" {
			return fmt.Errorf("%w: a webhook secret without a URL", ErrOptions)
		}
		return nil
	}
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w: webhook URL %q: want http(s)://HOST/PATH", ErrOptions, w.URL)
	}
	if u.User != nil {
		return fmt.Errorf("%w: webhook URL: put no credentials in the URL (they would be logged); the body is signed", ErrOptions)
	}
	if len(w.Secret) < MinSecretLen {
		return fmt.Errorf("%w: webhook secret of %d bytes: want at least %d (e.g. openssl rand -hex 32); notifications are always signed", ErrOptions, len(w.Secret), MinSecretLen)
	}
	if w.Timeout < 0 || w.Backoff < 0 || w.Queue < 0 || w.Retries < -1 {
		return fmt.Errorf("%w: a negative webhook bound", ErrOptions)
	}
	return nil
}

func newNotifier(w Webhook, note func(string, ...any)) *notifier {
	if w.Timeout == 0 {
		w.Timeout = 10 * time.Second
	}
	switch w.Retries {
	case 0:
		w.Retries = 5
	case -1:
		w.Retries = 0
	}
	if w.Backoff == 0 {
		w.Backoff = time.Second
	}
	if w.Queue == 0 {
		w.Queue = 1024
	}
	client := w.Client
	if client == nil {
		client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &notifier{cfg: w, client: client, queue: make(chan notification, w.Queue), note: note, now: time.Now,
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go n.loop()
	return n
}

// send queues a notification of type typ about the run; it never blocks.
func (n *notifier) send(typ string, run any) {
	if n == nil {
		return
	}
	if n.closing.Load() {
		n.dropped.Add(1)
		return
	}
	var idb [12]byte
	rand.Read(idb[:])
	id := "ntf_" + hex.EncodeToString(idb[:])
	body, err := json.Marshal(map[string]any{"id": id, "type": typ, "time": n.now().UTC(), "run": run})
	if err != nil {
		n.failed.Add(1)
		n.note("webhook: %s: %v", typ, err)
		return
	}
	n.pending.Add(1)
	select {
	case n.queue <- notification{id: id, body: body}:
	default:
		n.pending.Done()
		d := n.dropped.Add(1)
		n.note("webhook: the queue is full (%d waiting): notification %s (%s) dropped; %d dropped so far", cap(n.queue), id, typ, d)
	}
}

func (n *notifier) loop() {
	defer close(n.done)
	for {
		select {
		case nt := <-n.queue:
			n.deliver(nt)
			n.pending.Done()
		case <-n.ctx.Done():
			return
		}
	}
}

// deliver sends nt, retrying what may succeed later.
func (n *notifier) deliver(nt notification) {
	wait := n.cfg.Backoff
	for attempt := 0; ; attempt++ {
		status, err := n.attempt(nt)
		if err == nil && status/100 == 2 {
			n.delivered.Add(1)
			return
		}
		retry := err != nil || status == http.StatusTooManyRequests || status >= 500
		why := fmt.Sprintf("answered %d", status)
		if err != nil {
			why = err.Error()
		}
		if !retry || attempt >= n.cfg.Retries || n.ctx.Err() != nil {
			n.failed.Add(1)
			n.note("webhook: notification %s: %s after %d attempt(s): given up", nt.id, why, attempt+1)
			return
		}
		n.retries.Add(1)
		select {
		case <-time.After(wait):
		case <-n.ctx.Done():
			n.failed.Add(1)
			n.note("webhook: notification %s: %s; the server stopped before a retry", nt.id, why)
			return
		}
		wait = min(2*wait, time.Minute)
	}
}

// attempt posts nt once, signed now.
func (n *notifier) attempt(nt notification) (int, error) {
	ctx, cancel := context.WithTimeout(n.ctx, n.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.cfg.URL, bytes.NewReader(nt.body))
	if err != nil {
		return 0, err
	}
	ts := n.now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "autoagent-serve")
	req.Header.Set(WebhookTimestampHeader, strconv.FormatInt(ts, 10))
	req.Header.Set(WebhookSignatureHeader, SignWebhook(n.cfg.Secret, ts, nt.body))
	req.Header.Set(WebhookDeliveryHeader, nt.id)
	resp, err := n.client.Do(req)
	if err != nil {
		// The URL only: an error may quote the request.
		return 0, errors.New(strings.ReplaceAll(err.Error(), n.cfg.URL, "the webhook URL"))
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// close stops the deliveries. It waits up to drain for those queued (the
// runs the stop interrupted are notified), then cancels an attempt under
// way; the notifications still queued are dropped and counted.
func (n *notifier) close(drain time.Duration) {
	if n == nil {
		return
	}
	n.closeOnce.Do(func() {
		n.closing.Store(true)
		idle := make(chan struct{})
		go func() {
			n.pending.Wait()
			close(idle)
		}()
		select {
		case <-idle:
		case <-time.After(drain):
		}
		n.cancel()
		<-n.done
		for {
			select {
			case <-n.queue:
				n.pending.Done()
				n.dropped.Add(1)
			default:
				if d := n.dropped.Load(); d > 0 {
					n.note("webhook: %d notification(s) dropped in all", d)
				}
				return
			}
		}
	})
}

func (n *notifier) stats() WebhookStats {
	if n == nil {
		return WebhookStats{}
	}
	return WebhookStats{Delivered: n.delivered.Load(), Failed: n.failed.Load(), Dropped: n.dropped.Load(), Retries: n.retries.Load()}
}

// WebhookStats counts the server's notifications so far.
func (s *Server) WebhookStats() WebhookStats { return s.notify.stats() }

// notifyLocked queues the notification of a run's new status: awaiting a
// decision, or ended. ru.mu is held; sending never blocks.
func (ru *run) notifyLocked() {
	n := ru.s.notify
	if n == nil {
		return
	}
	st := ru.rec.Status
	if st != StatusAwaitingApproval && !st.ended() {
		return
	}
	v := ru.rec
	row := notifiedRun{summary: summary{v.ID, v.Status, v.Prompt, v.Session, v.StartedBy, v.Created, v.Updated, v.Pending, v.Error}}
	if v.Result != nil && st == StatusCompleted {
		row.Output = v.Result.Output
	}
	typ := "run.ended"
	if st == StatusAwaitingApproval {
		typ = "run.awaiting_approval"
	}
	n.send(typ, row)
}

// notifiedRun is the run in a notification.
type notifiedRun struct {
	summary
	Output string `json:"output,omitempty"`
}
