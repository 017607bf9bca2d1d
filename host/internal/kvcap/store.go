package kvcap

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Stores are the persistent stores of kv: grants, one bbolt file per
// namespace, shared by every module of a host. bbolt locks its file, so processes sharing the directory take
// turns; within a process a namespace's file is opened once while calls
// use it and closed when the last one is done, so other processes get
// their turn.
//
// Taint is kept per key, in the store: a value written by a caller that
// had seen untrusted content is marked, in the same transaction, and a
// call that reads it (or lists its key) is told its result is untrusted,
// in whatever run, module or process it reads it.
type Stores struct {
	dir string
	mu  sync.Mutex
	ns  map[string]*kvNamespace
}

type kvNamespace struct {
	mu   sync.Mutex // serialises open and close
	db   *bolt.DB
	refs int
}

var (
	kvBucket = []byte("kv")
	// metaBucket holds usedKey: the bytes the kv bucket's entries count
	// (entrySize), kept in step by every write, for the namespace quota.
	// (Stores written before entries counted their overhead kept "used";
	// they are counted again once under the new name.)
	metaBucket = []byte("meta")
	usedKey    = []byte("charged")
	// taintBucket holds a key for each kv entry a tainted caller wrote
	// (see [Stores]): its value is untrusted whoever reads it. A store
	// without the bucket (written before taint was kept) reads as
	// untainted.
	taintBucket = []byte("taint")
	taintMark   = []byte{1}
)

// entryOverhead is what each entry counts beyond its key and value:
// about what the store spends on it (a B+tree element, page headers), so
// a namespace of many empty entries stays near its quota on disk too.
const entryOverhead = 64

func entrySize(key, v []byte) int64 { return int64(len(key) + len(v) + entryOverhead) }

// errQuota is how a write past the namespace quota fails inside its
// transaction (which it rolls back).
var errQuota = errors.New("kv namespace quota")

// used returns the bytes the namespace holds, counting them once for a
// store written before the quota existed.
func used(tx *bolt.Tx, b *bolt.Bucket) (int64, error) {
	meta, err := tx.CreateBucketIfNotExists(metaBucket)
	if err != nil {
		return 0, err
	}
	if v := meta.Get(usedKey); len(v) == 8 {
		return int64(binary.LittleEndian.Uint64(v)), nil
	}
	var n int64
	err = b.ForEach(func(k, v []byte) error {
		n += entrySize(k, v)
		return nil
	})
	return n, err
}

func setUsed(tx *bolt.Tx, n int64) error {
	return tx.Bucket(metaBucket).Put(usedKey, binary.LittleEndian.AppendUint64(nil, uint64(n)))
}

// put stores key = v in namespace ns unless the namespace would then hold
// more than quota bytes; delete (v nil) removes key. tainted marks the
// value as written by a caller that had seen untrusted content; an
// untainted write (or a delete) clears the mark, since the value it
// leaves is no longer the tainted one.
func (s *Stores) put(ctx context.Context, ns string, key, v []byte, quota int64, tainted bool) error {
	return s.withTx(ctx, ns, func(tx *bolt.Tx, b *bolt.Bucket) error {
		n, err := used(tx, b)
		if err != nil {
			return err
		}
		if old := b.Get(key); old != nil {
			n = max(0, n-entrySize(key, old))
		}
		if v == nil {
			if err := b.Delete(key); err != nil {
				return err
			}
		} else {
			n += entrySize(key, v)
			if n > quota {
				return errQuota
			}
			if err := b.Put(key, v); err != nil {
				return err
			}
		}
		if err := setTaint(tx, key, v != nil && tainted); err != nil {
			return err
		}
		return setUsed(tx, n)
	})
}

// setTaint marks key tainted or clears its mark.
func setTaint(tx *bolt.Tx, key []byte, tainted bool) error {
	if !tainted {
		if tb := tx.Bucket(taintBucket); tb != nil {
			return tb.Delete(key)
		}
		return nil
	}
	tb, err := tx.CreateBucketIfNotExists(taintBucket)
	if err != nil {
		return err
	}
	return tb.Put(key, taintMark)
}

// taintOf returns the namespace's taint marks in tx, nil when it has none.
func taintOf(tx *bolt.Tx) *bolt.Bucket { return tx.Bucket(taintBucket) }

const (
	maxKey       = 512
	maxKeys      = 10000
	maxKeysBytes = 1 << 20 // of a kv_keys listing's JSON
)

// NewStores returns the stores kept in dir; "" means the user's data
// directory ($XDG_DATA_HOME/autoagent/kv, else ~/.local/share/autoagent/kv),
// made when a store is first opened.
func NewStores(dir string) *Stores {
	return &Stores{dir: dir, ns: map[string]*kvNamespace{}}
}

// Dir returns the directory the stores are kept in ("" when there is no
// data directory to put them in).
func (s *Stores) Dir() string {
	if s.dir != "" {
		return s.dir
	}
	d, _ := defaultKVDir()
	return d
}

// defaultKVDir is where stores live when Options.KVDir is empty.
func defaultKVDir() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "autoagent", "kv"), nil
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		d, err := os.UserConfigDir()
		if err != nil {
			return "", err
		}
		return filepath.Join(d, "autoagent", "kv"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "share", "autoagent", "kv"), nil
}

// view opens namespace ns (waiting for other processes until ctx ends)
// and runs fn in a read transaction; b is nil while the namespace holds
// nothing.
func (s *Stores) view(ctx context.Context, ns string, fn func(tx *bolt.Tx, b *bolt.Bucket) error) error {
	return s.open2(ctx, ns, false, fn)
}

// withTx is view for a write.
func (s *Stores) withTx(ctx context.Context, ns string, fn func(*bolt.Tx, *bolt.Bucket) error) error {
	return s.open2(ctx, ns, true, fn)
}

func (s *Stores) open2(ctx context.Context, ns string, write bool, fn func(*bolt.Tx, *bolt.Bucket) error) error {
	s.mu.Lock()
	n := s.ns[ns]
	if n == nil {
		n = &kvNamespace{}
		s.ns[ns] = n
	}
	s.mu.Unlock()

	n.mu.Lock()
	if n.db == nil {
		db, err := s.open(ctx, ns)
		if err != nil {
			n.mu.Unlock()
			return err
		}
		n.db = db
	}
	n.refs++
	db := n.db
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		n.refs--
		if n.refs == 0 {
			_ = n.db.Close()
			n.db = nil
		}
		n.mu.Unlock()
	}()
	if write {
		return db.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(kvBucket)
			if err != nil {
				return err
			}
			return fn(tx, b)
		})
	}
	return db.View(func(tx *bolt.Tx) error { return fn(tx, tx.Bucket(kvBucket)) })
}

func (s *Stores) open(ctx context.Context, ns string) (*bolt.DB, error) {
	dir := s.dir
	if dir == "" {
		d, err := defaultKVDir()
		if err != nil {
			return nil, fmt.Errorf("kv: no data directory for the stores: %w", err)
		}
		dir = d
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("kv: %w", err)
	}
	timeout := 5 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	if timeout <= 0 {
		return nil, context.DeadlineExceeded
	}
	path := filepath.Join(dir, ns+".db")
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: timeout})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			return nil, fmt.Errorf("kv: store %s is busy in another process", path)
		}
		return nil, fmt.Errorf("kv: opening store %s: %w", path, err)
	}
	return db, nil
}
