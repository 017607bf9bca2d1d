package host

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
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

// kvStores are the persistent stores of kv: grants, one bbolt file per
// namespace. bbolt locks its file, so processes sharing the directory take
// turns; within a process a namespace's file is opened once while calls
// use it and closed when the last one is done, so other processes get
// their turn.
type kvStores struct {
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
)

// kvEntryOverhead is what each entry counts beyond its key and value:
// about what the store spends on it (a B+tree element, page headers), so
// a namespace of many empty entries stays near its quota on disk too.
const kvEntryOverhead = 64

func entrySize(key, v []byte) int64 { return int64(len(key) + len(v) + kvEntryOverhead) }

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
// more than quota bytes; delete (v nil) removes key.
func (s *kvStores) put(ctx context.Context, ns string, key, v []byte, quota int64) error {
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
		return setUsed(tx, n)
	})
}

const (
	maxKVKey       = 512
	maxKVKeys      = 10000
	maxKVKeysBytes = 1 << 20 // of a kv_keys listing's JSON
)

func newKVStores(dir string) *kvStores {
	return &kvStores{dir: dir, ns: map[string]*kvNamespace{}}
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

// with opens namespace ns (waiting for other processes until ctx ends)
// and runs fn in a read or write transaction.
func (s *kvStores) with(ctx context.Context, ns string, write bool, fn func(*bolt.Bucket) error) error {
	return s.open2(ctx, ns, write, func(_ *bolt.Tx, b *bolt.Bucket) error { return fn(b) })
}

// withTx is with for a write that needs its transaction.
func (s *kvStores) withTx(ctx context.Context, ns string, fn func(*bolt.Tx, *bolt.Bucket) error) error {
	return s.open2(ctx, ns, true, fn)
}

func (s *kvStores) open2(ctx context.Context, ns string, write bool, fn func(*bolt.Tx, *bolt.Bucket) error) error {
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

func (s *kvStores) open(ctx context.Context, ns string) (*bolt.DB, error) {
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

// namespace resolves a guest's namespace argument against the grants.
func (inst *instance) namespace(nsOff uint64, op string) string {
	names := inst.l.kvNames
	if inst.describing {
		inst.deny(&DeniedError{Kind: "kv", Action: op, Reason: noCapabilities})
	}
	if nsOff == 0 {
		switch len(names) {
		case 1:
			inst.use("kv:" + names[0])
			return names[0]
		case 0:
			inst.deny(&DeniedError{Kind: "kv", Action: op, Reason: "the module has no kv: grant"})
		default:
			inst.fail(&TrapError{Reason: fmt.Sprintf("%s: the module has %d kv namespaces; name one", op, len(names))})
		}
	}
	ns := string(inst.read(nsOff, op, maxKVKey))
	for _, n := range names {
		if n == ns {
			inst.use("kv:" + ns)
			return ns
		}
	}
	inst.deny(&DeniedError{Kind: "kv", Action: fmt.Sprintf("%s in namespace %q", op, ns), Reason: fmt.Sprintf("the module has no kv:%s grant", ns)})
	return ""
}

func (inst *instance) kvKey(off uint64, op string) []byte {
	key := inst.view(off, op+" key")
	if len(key) == 0 || len(key) > maxKVKey {
		inst.fail(&TrapError{Reason: fmt.Sprintf("%s: keys are 1 to %d bytes, got %d", op, maxKVKey, len(key))})
	}
	return bytes.Clone(key)
}

func (inst *instance) kvErr(err error) {
	if err == nil {
		return
	}
	if errors.Is(err, errQuota) {
		inst.fail(limitErr(LimitKVNamespace, inst.limits.KVNamespace))
	}
	if inst.ctx.Err() != nil || inst.stopRequested.Load() {
		inst.fail(timeLimitErr(inst.limits.Timeout))
	}
	if dl, ok := inst.ctx.Deadline(); ok && time.Now().After(dl) {
		inst.fail(timeLimitErr(inst.limits.Timeout))
	}
	inst.fail(&TrapError{Reason: err.Error()})
}

func (inst *instance) kvGet(nsOff, keyOff uint64) uint64 {
	ns := inst.namespace(nsOff, "kv_get")
	key := inst.kvKey(keyOff, "kv_get")
	var v []byte
	inst.kvErr(inst.l.h.kv.with(inst.ctx, ns, false, func(b *bolt.Bucket) error {
		if b != nil {
			v = bytes.Clone(b.Get(key))
		}
		return nil
	}))
	if v == nil {
		return 0
	}
	return inst.writePresent(v)
}

func (inst *instance) kvSet(nsOff, keyOff, valOff uint64) {
	ns := inst.namespace(nsOff, "kv_set")
	key := inst.kvKey(keyOff, "kv_set")
	v := inst.readLimited(valOff, "kv_set value", LimitKVValue, inst.limits.KVValue)
	if v == nil {
		v = []byte{}
	}
	inst.kvErr(inst.l.h.kv.put(inst.ctx, ns, key, v, inst.limits.KVNamespace))
}

func (inst *instance) kvDelete(nsOff, keyOff uint64) {
	ns := inst.namespace(nsOff, "kv_delete")
	key := inst.kvKey(keyOff, "kv_delete")
	inst.kvErr(inst.l.h.kv.put(inst.ctx, ns, key, nil, inst.limits.KVNamespace))
}

func (inst *instance) kvKeys(nsOff, prefixOff uint64) uint64 {
	ns := inst.namespace(nsOff, "kv_keys")
	var prefix []byte
	if prefixOff != 0 {
		prefix = inst.read(prefixOff, "kv_keys prefix", maxKVKey)
	}
	// The listing is written as JSON as it is read, and cut at maxKVKeys
	// keys or maxKVKeysBytes of JSON: a key of control bytes takes six
	// times its length once escaped.
	out := bytes.NewBuffer(make([]byte, 0, 256))
	out.WriteByte('[')
	n := 0
	inst.kvErr(inst.l.h.kv.with(inst.ctx, ns, false, func(b *bolt.Bucket) error {
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && n < maxKVKeys; k, _ = c.Next() {
			q, err := json.Marshal(string(k))
			if err != nil {
				return err
			}
			if out.Len()+len(q)+2 > maxKVKeysBytes {
				break
			}
			if n > 0 {
				out.WriteByte(',')
			}
			out.Write(q)
			n++
		}
		return nil
	}))
	out.WriteByte(']')
	return inst.write(out.Bytes())
}
