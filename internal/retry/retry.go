// Package retry runs provider calls again after transient failures, with
// exponential backoff and jitter, honouring the delay the server asked for.
//
//	var resp *http.Response
//	err := retry.Policy{}.Do(ctx, func(ctx context.Context) error {
//		var err error
//		resp, err = send(ctx) // returns *llm.ProviderError on failure
//		return err
//	})
//
// # What is retried
//
// An error is retried when [llm.IsRetryable] says so: the provider adapters
// set Retryable on a *llm.ProviderError for HTTP 408, 409, 429 and 5xx except
// 501 and 505 (see [RetryableStatus]), for "overloaded" errors, and for
// dropped connections. Everything else, a 400 or a 401 in particular, fails
// at once: sending the same request again cannot change the answer.
//
// # Delays
//
// Before retry n (n = 1 for the first retry) the policy waits
// BaseDelay·2^(n-1), capped at MaxDelay, passed through Jitter. When the
// error carries a RetryAfter (from a Retry-After or retry-after-ms header, or
// a provider's retry hint in the body) that delay is used as is instead. A
// RetryAfter longer than MaxRetryAfter ends the retries at once: the server
// asked for a longer pause than the caller is willing to block, so the error
// (with its RetryAfter) goes back to the caller, who can reschedule.
//
// # Testing
//
// Sleep and Jitter are injectable, so tests run the policy against a fake
// clock and check the exact delays without waiting.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/autoagent-go/autoagent/llm"
)

// The defaults a zero Policy uses.
const (
	DefaultMaxAttempts   = 3
	DefaultBaseDelay     = 500 * time.Millisecond
	DefaultMaxDelay      = 8 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
)

// Policy says how often and how long to retry. The zero value is ready to
// use with the defaults above; a Policy is a value and safe for concurrent
// use.
type Policy struct {
	// MaxAttempts is the total number of calls, the first included; 0 or
	// less means DefaultMaxAttempts. 1 disables retries.
	MaxAttempts int
	// BaseDelay is the backoff before the first retry; 0 means
	// DefaultBaseDelay.
	BaseDelay time.Duration
	// MaxDelay caps the exponential backoff; 0 means DefaultMaxDelay.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest server-requested delay the policy will
	// wait; a longer one ends the retries. 0 means DefaultMaxRetryAfter.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done, returning ctx.Err() then. nil
	// means a real timer. Tests inject a fake clock here.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter spreads a backoff delay so that many clients do not retry in
	// lockstep. nil means "equal jitter": a uniform delay in [d/2, d].
	// It is not applied to a server-requested RetryAfter.
	Jitter func(d time.Duration) time.Duration
	// OnRetry, when set, is called before each wait with the number of the
	// coming attempt (2 for the first retry), the error that caused it and
	// the delay. Use it for logs and traces.
	OnRetry func(attempt int, err error, delay time.Duration)
}

// ForRetries returns the policy for a provider option that counts retries
// rather than attempts, as every adapter's Options.MaxRetries does:
// defaultRetries retries when maxRetries is zero, none when it is negative.
func ForRetries(maxRetries, defaultRetries int, onRetry func(attempt int, err error, delay time.Duration)) Policy {
	p := Policy{MaxAttempts: maxRetries + 1, OnRetry: onRetry}
	switch {
	case maxRetries < 0:
		p.MaxAttempts = 1
	case maxRetries == 0:
		p.MaxAttempts = defaultRetries + 1
	}
	return p
}

// Do calls fn until it succeeds, returns an error that is not retryable,
// the attempts are spent, or ctx ends. It returns nil or fn's last error
// unchanged; when ctx ends during a wait it returns an error that wraps both
// ctx.Err() and fn's last error. fn receives ctx and should honour it.
func (p Policy) Do(ctx context.Context, fn func(ctx context.Context) error) error {
	attempts := p.MaxAttempts
	if attempts <= 0 {
		attempts = DefaultMaxAttempts
	}
	for attempt := 1; ; attempt++ {
		err := fn(ctx)
		if err == nil {
			return nil
		}
		if attempt >= attempts || ctx.Err() != nil || !llm.IsRetryable(err) {
			return err
		}
		delay, ok := p.delay(attempt, err)
		if !ok {
			return err
		}
		if p.OnRetry != nil {
			p.OnRetry(attempt+1, err, delay)
		}
		if serr := p.sleep(ctx, delay); serr != nil {
			return fmt.Errorf("retry: gave up waiting to retry: %w (last error: %w)", serr, err)
		}
	}
}

// delay returns how long to wait after the given failed attempt (1 for the
// first call) before the next one, and false when the server asked for a
// pause longer than MaxRetryAfter.
func (p Policy) delay(attempt int, err error) (time.Duration, bool) {
	if ra := retryAfter(err); ra > 0 {
		limit := p.MaxRetryAfter
		if limit <= 0 {
			limit = DefaultMaxRetryAfter
		}
		return ra, ra <= limit
	}
	base, ceiling := p.BaseDelay, p.MaxDelay
	if base <= 0 {
		base = DefaultBaseDelay
	}
	if ceiling <= 0 {
		ceiling = DefaultMaxDelay
	}
	d := base
	for i := 1; i < attempt && d < ceiling; i++ {
		d *= 2
	}
	d = min(d, ceiling)
	if p.Jitter != nil {
		return p.Jitter(d), true
	}
	return equalJitter(d), true
}

func retryAfter(err error) time.Duration {
	var pe *llm.ProviderError
	if errors.As(err, &pe) {
		return pe.RetryAfter
	}
	return 0
}

func equalJitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

func (p Policy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RetryableStatus reports whether an HTTP status is worth retrying: 408
// (request timeout), 409 (conflict, e.g. a concurrent-request lock), 429 and
// every 5xx except 501 (not implemented) and 505 (HTTP version not
// supported), which will not change.
func RetryableStatus(status int) bool {
	switch {
	case status == 408, status == 409, status == 429:
		return true
	case status == 501, status == 505:
		return false
	default:
		return status >= 500 && status <= 599
	}
}
