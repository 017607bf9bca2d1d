package retry

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter returns the delay a response asks for, from its headers:
// "retry-after-ms" (milliseconds, sent by OpenAI and Anthropic, more precise
// so it wins), then "Retry-After" as delay-seconds (fractions accepted) or
// as an HTTP-date, measured from now. It returns 0 when neither header is
// present or valid, or the date has passed; absurd values are clamped to a
// day rather than overflowing.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && !math.IsInf(ms, 0) {
			return clampDelay(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || math.IsInf(s, 0) || math.IsNaN(s) {
			return 0
		}
		return clampDelay(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxHeaderDelay)
		}
	}
	return 0
}

const maxHeaderDelay = 24 * time.Hour

func clampDelay(ns float64) time.Duration {
	if ns >= float64(maxHeaderDelay) {
		return maxHeaderDelay
	}
	return time.Duration(ns)
}
