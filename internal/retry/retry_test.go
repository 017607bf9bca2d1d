package retry

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/google/go-cmp/cmp"
)

// fakeClock records the waits a policy asks for instead of sleeping.
type fakeClock struct {
	waits []time.Duration
	// cancel, when set, is called on the nth wait to simulate the caller
	// giving up while the policy sleeps.
	cancelOn int
	cancel   context.CancelFunc
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.waits = append(c.waits, d)
	if c.cancel != nil && len(c.waits) == c.cancelOn {
		c.cancel()
	}
	return ctx.Err()
}

func noJitter(d time.Duration) time.Duration { return d }

// failing returns fn that fails with errs in order, then succeeds.
func failing(calls *int, errs ...error) func(context.Context) error {
	return func(context.Context) error {
		*calls++
		if *calls <= len(errs) {
			return errs[*calls-1]
		}
		return nil
	}
}

func status(code int) error {
	return &llm.ProviderError{Provider: "test", Status: code, Retryable: RetryableStatus(code)}
}

func TestDo(t *testing.T) {
	tests := []struct {
		name      string
		policy    Policy
		errs      []error
		wantCalls int
		wantWaits []time.Duration
		wantErr   error // matched with errors.Is; nil means success
	}{
		{
			name:      "success first time",
			wantCalls: 1,
		},
		{
			name:      "429 then success",
			errs:      []error{status(429)},
			wantCalls: 2,
			wantWaits: []time.Duration{500 * time.Millisecond},
		},
		{
			name:      "default three attempts with doubling backoff",
			errs:      []error{status(503), status(502), status(500), status(500)},
			wantCalls: 3,
			wantWaits: []time.Duration{500 * time.Millisecond, time.Second},
			wantErr:   errAny,
		},
		{
			name:      "backoff capped at MaxDelay",
			policy:    Policy{MaxAttempts: 6, BaseDelay: time.Second, MaxDelay: 3 * time.Second},
			errs:      []error{status(500), status(500), status(500), status(500), status(500)},
			wantCalls: 6,
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second},
		},
		{
			name:      "400 is not retried",
			errs:      []error{status(400)},
			wantCalls: 1,
			wantErr:   errAny,
		},
		{
			name:      "401 is not retried",
			errs:      []error{status(401)},
			wantCalls: 1,
			wantErr:   errAny,
		},
		{
			name:      "plain error is not retried",
			errs:      []error{errors.New("bad config")},
			wantCalls: 1,
			wantErr:   errAny,
		},
		{
			name:      "Retry-After honoured exactly, without jitter",
			errs:      []error{&llm.ProviderError{Status: 429, Retryable: true, RetryAfter: 7 * time.Second}},
			policy:    Policy{Jitter: func(time.Duration) time.Duration { panic("jitter applied to Retry-After") }},
			wantCalls: 2,
			wantWaits: []time.Duration{7 * time.Second},
		},
		{
			name:      "Retry-After beyond the cap ends retries",
			errs:      []error{&llm.ProviderError{Status: 429, Retryable: true, RetryAfter: 2 * time.Minute}},
			wantCalls: 1,
			wantErr:   errAny,
		},
		{
			name:      "Retry-After cap is configurable",
			policy:    Policy{MaxRetryAfter: 5 * time.Minute},
			errs:      []error{&llm.ProviderError{Status: 429, Retryable: true, RetryAfter: 2 * time.Minute}},
			wantCalls: 2,
			wantWaits: []time.Duration{2 * time.Minute},
		},
		{
			name:      "MaxAttempts 1 disables retries",
			policy:    Policy{MaxAttempts: 1},
			errs:      []error{status(503)},
			wantCalls: 1,
			wantErr:   errAny,
		},
		{
			name:      "wrapped provider error is still retryable",
			errs:      []error{wrap(status(529))},
			wantCalls: 2,
			wantWaits: []time.Duration{500 * time.Millisecond},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{}
			p := tt.policy
			p.Sleep = clock.Sleep
			if p.Jitter == nil {
				p.Jitter = noJitter
			}
			calls := 0
			err := p.Do(context.Background(), failing(&calls, tt.errs...))
			if calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tt.wantCalls)
			}
			if diff := cmp.Diff(tt.wantWaits, clock.waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			switch {
			case tt.wantErr == nil && err != nil:
				t.Errorf("err = %v, want success", err)
			case tt.wantErr != nil && err == nil:
				t.Errorf("err = nil, want the last error")
			case err != nil && !errors.Is(err, tt.errs[calls-1]):
				t.Errorf("err = %v, want the last error %v unchanged", err, tt.errs[calls-1])
			}
		})
	}
}

var errAny = errors.New("any error")

func wrap(err error) error { return &wrapped{err} }

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "wrapped: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

func TestDoCancelledDuringWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := &fakeClock{cancelOn: 1, cancel: cancel}
	last := status(503)
	calls := 0
	err := Policy{Sleep: clock.Sleep, Jitter: noJitter}.Do(ctx, failing(&calls, last, last, last))
	if calls != 1 {
		t.Errorf("calls = %d, want 1 (no call after cancellation)", calls)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want it to wrap context.Canceled", err)
	}
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Status != 503 {
		t.Errorf("err = %v, want it to wrap the last provider error", err)
	}
}

func TestDoStopsWhenContextEndedDuringCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := Policy{Sleep: (&fakeClock{}).Sleep}.Do(ctx, func(context.Context) error {
		calls++
		cancel()
		return status(503)
	})
	if calls != 1 || err == nil {
		t.Fatalf("calls = %d, err = %v; want one call and its error", calls, err)
	}
}

func TestDoRealSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	// A real timer of an hour: the test only finishes because the wait
	// returns on the cancelled context.
	err := Policy{BaseDelay: time.Hour, MaxDelay: time.Hour}.Do(ctx, func(context.Context) error {
		calls++
		return status(503)
	})
	if calls != 1 || err == nil {
		t.Fatalf("calls = %d, err = %v", calls, err)
	}
}

func TestOnRetry(t *testing.T) {
	var got []int
	calls := 0
	p := Policy{Sleep: (&fakeClock{}).Sleep, Jitter: noJitter, OnRetry: func(attempt int, err error, d time.Duration) {
		got = append(got, attempt)
	}}
	_ = p.Do(context.Background(), failing(&calls, status(500), status(500)))
	if diff := cmp.Diff([]int{2, 3}, got); diff != "" {
		t.Errorf("OnRetry attempts (-want +got):\n%s", diff)
	}
}

func TestDefaultJitterBounds(t *testing.T) {
	p := Policy{}
	for attempt := 1; attempt <= 6; attempt++ {
		for range 200 {
			d, ok := p.delay(attempt, status(500))
			full := min(DefaultBaseDelay<<(attempt-1), DefaultMaxDelay)
			if !ok || d < full/2 || d > full {
				t.Fatalf("attempt %d: delay %v outside [%v, %v]", attempt, d, full/2, full)
			}
		}
	}
}

func TestRetryableStatus(t *testing.T) {
	for code := 100; code < 600; code++ {
		want := code == 408 || code == 409 || code == 429 || (code >= 500 && code != 501 && code != 505)
		if got := RetryableStatus(code); got != want {
			t.Errorf("RetryableStatus(%d) = %v, want %v", code, got, want)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		headers map[string]string
		want    time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "20"}, 20 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"zero", map[string]string{"Retry-After": "0"}, 0},
		{"negative", map[string]string{"Retry-After": "-3"}, 0},
		{"http date", map[string]string{"Retry-After": "Fri, 01 May 2026 12:00:30 GMT"}, 30 * time.Second},
		{"http date in the past", map[string]string{"Retry-After": "Fri, 01 May 2026 11:59:00 GMT"}, 0},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0},
		{"retry-after-ms wins", map[string]string{"Retry-After": "2", "Retry-After-Ms": "1250"}, 1250 * time.Millisecond},
		{"bad retry-after-ms falls back", map[string]string{"Retry-After": "2", "Retry-After-Ms": "x"}, 2 * time.Second},
		{"huge value clamped", map[string]string{"Retry-After": "1e300"}, 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.headers {
				h.Set(k, v)
			}
			if got := ParseRetryAfter(h, now); got != tt.want {
				t.Errorf("ParseRetryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestForRetries(t *testing.T) {
	for _, tt := range []struct{ maxRetries, def, wantAttempts int }{
		{0, 2, 3},  // zero means the provider's default
		{5, 2, 6},  // a count of retries, the first call comes on top
		{-1, 2, 1}, // negative disables retries
		{0, 0, 1},  // a default of no retries is honoured, not mistaken for "unset"
	} {
		if got := ForRetries(tt.maxRetries, tt.def, nil).MaxAttempts; got != tt.wantAttempts {
			t.Errorf("ForRetries(%d, %d).MaxAttempts = %d, want %d", tt.maxRetries, tt.def, got, tt.wantAttempts)
		}
	}
}
