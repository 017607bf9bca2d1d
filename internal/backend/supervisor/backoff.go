package supervisor

import "time"

// backoff returns the delay before the next start after failures
// consecutive failures: min doubling per failure, capped at max, and 0
// before the first failure.
func backoff(failures int, minDelay, maxDelay time.Duration) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := minDelay
	for i := 1; i < failures && d < maxDelay; i++ {
		d *= 2
	}
	return min(d, maxDelay)
}
