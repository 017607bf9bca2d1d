package autoagent

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/llm/cache"
	"github.com/autoagent-go/autoagent/manifest"
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
	// Key signs the File's entries (cache.Options.Key): an entry it did
	// not sign answers nothing, so a cache file someone else wrote (one
	// a checkout or its agent file names) replays none of its answers as
	// the model's. Nil means this user's key, kept beside the trust store
	// (CacheKeyPath), made on first use; the runtime's tools never reach
	// it. Unused without a File.
	Key []byte
}

// CacheKeyPath is where this user's response-cache key is kept: cache.key
// beside the trust store (manifest.DefaultTrustPath), a directory no
// sandboxed tool or workspace of a run may reach (Config.Protects).
func CacheKeyPath() (string, error) {
	p, err := manifest.DefaultTrustPath()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(p), "cache.key"), nil
}

// minCacheKey is the shortest key a key file may hold.
const minCacheKey = 16

// userCacheKey reads this user's cache key, making it (32 random bytes,
// mode 0600) when there is none.
func userCacheKey() ([]byte, error) {
	path, err := CacheKeyPath()
	if err != nil {
		return nil, err
	}
	for range 2 {
		b, err := os.ReadFile(path)
		if err == nil {
			if len(b) < minCacheKey {
				return nil, fmt.Errorf("the cache key %s holds %d bytes, fewer than %d: delete it, and the next run makes a new one", path, len(b), minCacheKey)
			}
			return b, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // another process made it first: read theirs
		}
		if err != nil {
			return nil, err
		}
		key := make([]byte, 32)
		rand.Read(key)
		_, werr := f.Write(key)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			os.Remove(path)
			return nil, werr
		}
		return key, nil
	}
	return nil, fmt.Errorf("the cache key %s: made and gone again", path)
}

// openCache puts the response cache cc asks for in front of model.
func (rt *Runtime) openCache(cc *CacheConfig, model llm.Provider, tr *trace.Tracer) (llm.Provider, error) {
	if cc == nil {
		return model, nil
	}
	key := cc.Key
	if key == nil && cc.File != "" {
		var err error
		if key, err = userCacheKey(); err != nil {
			return nil, fmt.Errorf("%w: Cache: the key that signs the file's answers: %w (or set CacheConfig.Key)", ErrConfig, err)
		}
	}
	c, err := cache.Open(model, cache.Options{File: cc.File, TTL: cc.TTL, MaxEntries: cc.MaxEntries, MaxBytes: cc.MaxBytes, Tracer: tr, Key: key})
	if err != nil {
		return nil, fmt.Errorf("%w: Cache: %w", ErrConfig, err)
	}
	if n := c.Stats().Unsigned; n > 0 {
		fmt.Fprintf(rt.notes, "autoagent: the response cache %s holds %d answers this user's key did not sign: they answer nothing\n", cc.File, n)
	}
	rt.cache = c
	return c, nil
}
