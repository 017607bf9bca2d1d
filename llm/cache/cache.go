// Package cache is a response cache: an [llm.Provider] that answers a
// request it has seen before from what the provider answered then,
// without calling it.
//
//	c, err := cache.Open(provider, cache.Options{File: "responses.cache", Tracer: tr})
//	if err != nil {
//		return err
//	}
//	defer c.Close()
//	agent := &loop.Agent{Provider: c, …}
//
// # What is a hit
//
// A request's key is the sha256 of its canonical form: the provider's
// name, the model, every message (parts, tool calls and results,
// signatures, images), the tools with their schemas, the tool choice,
// the temperature, the token cap and the response format, each string
// with its length. Only an exact match hits (whitespace inside JSON
// values aside): a changed system
// prompt, tool schema or temperature is another request. An entry
// older than Options.TTL is a miss and is dropped. A request whose
// context carries [Bypass] always goes to the provider (its answer must
// be fresh), and its answer is stored for later ones.
//
// A hit carries no usage: no tokens were spent (the provider reported
// none). What the hit saved, the usage of the answer it replays, is in
// the trace (cache_hit) and in `autoagent trace summarize`. A streamed
// request is answered from the cache as a stream: the text, the
// reasoning, each tool call, then the done event.
//
// # What is stored
//
// Only answers that ended normally (stop, tool calls, length) are
// stored, never a failure. Every string of a stored answer is redacted
// first (trace.RedactMessage, as loop's recordings are) unless
// Options.KeepSecrets: what a hit returns is what the store holds, in
// memory as in the file. The file (mode 0600) is a log of entries,
// appended to and compacted when mostly dead; a line that does not
// parse (a crash mid-write, two processes writing at once) is skipped.
// Bounds: Options.MaxEntries and MaxBytes, the least recently used
// entry evicted first.
//
// # Trust
//
// A hit is replayed as the model's own answer, tool calls included, and
// nothing in a store says who wrote it: use only a cache file you wrote,
// keep it out of checkouts, and out of reach of the run's tools (the
// runtime protects Config.Cache's file).
package cache

import (
	"context"
	"errors"
	"iter"
	"sync"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/trace"
)

// The defaults of Options.
const (
	DefaultTTL        = 24 * time.Hour
	DefaultMaxEntries = 10_000
	DefaultMaxBytes   = 64 << 20
)

// The trace events of the cache (payload trace.ModelCall): Status "hit"
// or "miss"; MessageCount, ToolCount and Streaming describe the request;
// on a hit the token counts are those the replayed answer cost when the
// provider gave it, which the hit saved.
const (
	EventHit  = trace.CacheHit
	EventMiss = trace.CacheMiss
)

// Options configure a Cache. The zero value is an in-memory cache with
// the defaults.
type Options struct {
	// File, when set, keeps the entries in that file across processes;
	// "" keeps them in memory only.
	File string
	// TTL is how long an entry answers (0: DefaultTTL; negative: for
	// ever).
	TTL time.Duration
	// MaxEntries and MaxBytes bound the entries, by count and by the
	// size of their encoded answers (0: the defaults).
	MaxEntries int
	MaxBytes   int64
	// KeepSecrets stores answers as they came. By default every string
	// of an answer is redacted before it is stored.
	KeepSecrets bool
	// Key, when set, signs every entry written to File (HMAC-SHA256) and
	// makes an entry the key did not sign answer nothing: a cache file
	// someone else wrote (a checkout's, an agent file's) replays none of
	// its answers as the model's. Keep it where the run's tools cannot
	// read it (autoagent keeps the user's beside the trust store). Nil
	// writes and reads entries unsigned: a program that names its file
	// made that decision.
	Key []byte
	// Tracer receives cache_hit and cache_miss events; nil traces
	// nothing.
	Tracer *trace.Tracer
	// Now returns the time; nil means time.Now.
	Now func() time.Time
}

// Cache is a Provider answering from a store of earlier answers, and
// calling the provider it wraps on a miss. It is safe for concurrent
// use; two concurrent misses of one key both call the provider.
type Cache struct {
	p     llm.Provider
	name  string
	opts  Options
	mu    sync.Mutex
	store *store
}

var _ llm.Provider = (*Cache)(nil)

// Open returns a cache in front of p. With Options.File it reads the
// file's entries (creating the file if needed); a file that is not a
// cache's is an error, never emptied.
func Open(p llm.Provider, opts Options) (*Cache, error) {
	if p == nil {
		return nil, errors.New("cache: no provider to cache")
	}
	if opts.TTL == 0 {
		opts.TTL = DefaultTTL
	}
	if opts.MaxEntries <= 0 {
		opts.MaxEntries = DefaultMaxEntries
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	c := &Cache{p: p, name: llm.Name(p), opts: opts}
	st, err := openStore(opts)
	if err != nil {
		return nil, err
	}
	c.store = st
	return c, nil
}

// Name returns the wrapped provider's name.
func (c *Cache) Name() string { return c.name }

// Close closes the file; the cache answers nothing after it.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.store.close()
}

// Stats are a cache's counts since Open.
type Stats struct {
	Hits, Misses, Entries int
	Bytes                 int64
	// Unsigned counts the file's entries Open passed over because
	// Options.Key did not sign them.
	Unsigned int
}

// Stats returns the cache's counts.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Hits: c.store.hits, Misses: c.store.misses, Entries: len(c.store.byKey), Bytes: c.store.bytes, Unsigned: c.store.unsigned}
}

type bypassKey struct{}

// Bypass returns ctx marking its requests as needing a fresh answer:
// the cache calls the provider (and stores the answer).
func Bypass(ctx context.Context) context.Context { return context.WithValue(ctx, bypassKey{}, true) }

func bypassed(ctx context.Context) bool { b, _ := ctx.Value(bypassKey{}).(bool); return b }

// Complete answers req from the cache, or from the provider.
func (c *Cache) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	key := c.Key(req)
	if resp, ok := c.lookup(key, req, false, bypassed(ctx)); ok {
		return resp, nil
	}
	resp, err := c.p.Complete(ctx, req)
	if err == nil && resp != nil {
		c.put(key, resp)
	}
	return resp, err
}

// Stream answers req from the cache as a stream, or streams the
// provider's answer through, storing it once done.
func (c *Cache) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		key := c.Key(req)
		if resp, ok := c.lookup(key, req, true, bypassed(ctx)); ok {
			replay(resp, yield)
			return
		}
		for ev, err := range c.p.Stream(ctx, req) {
			if err == nil && ev.Type == llm.StreamDone && ev.Response != nil {
				c.put(key, ev.Response)
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// replay yields resp as a provider's stream would.
func replay(resp *llm.Response, yield func(llm.StreamEvent, error) bool) {
	for _, p := range resp.Message.Parts {
		var ev llm.StreamEvent
		switch {
		case p.Type == llm.PartText && p.Text != "":
			ev = llm.StreamEvent{Type: llm.StreamText, Text: p.Text}
		case p.Type == llm.PartReasoning && p.Text != "":
			ev = llm.StreamEvent{Type: llm.StreamReasoning, Text: p.Text}
		case p.Type == llm.PartToolCall && p.ToolCall != nil:
			call := *p.ToolCall
			ev = llm.StreamEvent{Type: llm.StreamToolCall, ToolCall: &call}
		default:
			continue
		}
		if !yield(ev, nil) {
			return
		}
	}
	yield(llm.StreamEvent{Type: llm.StreamDone, Response: resp}, nil)
}

// lookup returns the stored answer of key, a copy the caller owns, and
// traces the hit or the miss.
func (c *Cache) lookup(key string, req *llm.Request, streaming, bypass bool) (*llm.Response, bool) {
	c.mu.Lock()
	var e *entry
	if !bypass {
		e = c.store.get(key, c.opts.Now())
	}
	var resp *llm.Response
	var saved llm.Usage
	if e != nil {
		c.store.hits++
		resp = &llm.Response{Message: e.resp.Message.Clone(), FinishReason: e.resp.FinishReason, Model: e.resp.Model, ID: e.resp.ID}
		if e.resp.Usage != nil {
			saved = *e.resp.Usage
		}
	} else {
		c.store.misses++
	}
	c.mu.Unlock()
	if c.opts.Tracer != nil {
		p := trace.ModelCall{Status: "miss", MessageCount: len(req.Messages), ToolCount: len(req.Tools), Streaming: streaming}
		typ := EventMiss
		if e != nil {
			typ, p.Status = EventHit, "hit"
			p.InputTokens, p.OutputTokens, p.CachedTokens = saved.InputTokens, saved.OutputTokens, saved.CachedTokens
		}
		trace.EmitPayload(c.opts.Tracer, trace.Event{Type: typ}, p)
	}
	return resp, e != nil
}

// storable reports whether an answer that ended for reason is kept.
func storable(reason llm.FinishReason) bool {
	switch reason {
	case llm.FinishStop, llm.FinishToolCalls, llm.FinishLength, "":
		return true
	}
	return false
}

// put stores resp, redacted unless KeepSecrets, under key.
func (c *Cache) put(key string, resp *llm.Response) {
	if !storable(resp.FinishReason) {
		return
	}
	stored := *resp
	if c.opts.KeepSecrets {
		stored.Message = resp.Message.Clone()
	} else {
		stored.Message = trace.RedactMessage(resp.Message)
	}
	if resp.Usage != nil {
		u := *resp.Usage
		stored.Usage = &u
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.store.put(key, &stored, c.opts.Now())
}
