package autoagent

import (
	"fmt"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/llm/cache"
	"github.com/autoagent-go/autoagent/trace"
)

// CacheConfig turns the response cache on (Config.Cache, package
// llm/cache): a request the model was sent before, exactly, is answered
// from what it answered then, with no provider call.
type CacheConfig struct {
	// File keeps the answers across runs and processes; "" keeps them in
	// memory, for the Runtime's life. The runtime's tools never reach it:
	// a hit is replayed as the model's own answer.
	File string
	// TTL, MaxEntries and MaxBytes are llm/cache's Options (0: its
	// defaults, 24 h, 10 000 answers, 64 MiB).
	TTL        time.Duration
	MaxEntries int
	MaxBytes   int64
}

// openCache puts the response cache cc asks for in front of model.
func (rt *Runtime) openCache(cc *CacheConfig, model llm.Provider, tr *trace.Tracer) (llm.Provider, error) {
	if cc == nil {
		return model, nil
	}
	c, err := cache.Open(model, cache.Options{File: cc.File, TTL: cc.TTL, MaxEntries: cc.MaxEntries, MaxBytes: cc.MaxBytes, Tracer: tr})
	if err != nil {
		return nil, fmt.Errorf("%w: Cache: %w", ErrConfig, err)
	}
	rt.cache = c
	return c, nil
}
