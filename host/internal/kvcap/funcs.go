package kvcap

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/autoagent-go/autoagent/host/internal/hostcall"
)

// Call is what the kv functions need of the call in progress: the call
// itself and what its module may reach.
type Call interface {
	hostcall.Call
	// KV returns the module's stores and granted namespaces.
	KV() Access
	// KVWritten is the call's count of bytes written (kv_set and
	// kv_delete: key, value and 64 bytes each), which the host clears as
	// a call begins.
	KVWritten() *int64
	// Tainted reports whether the caller has seen untrusted content (or
	// the instance holds some): what the call writes is stored tainted.
	Tainted() bool
	// Taint marks the call's result untrusted: it read a value, or listed
	// a key, that a tainted caller wrote.
	Taint()
}

// Access is what a module may reach of the stores: the namespaces of its
// kv: grants.
type Access struct {
	Stores     *Stores
	Namespaces []string
}

// Funcs are the kv functions of extism:host/user (host/ABI.md §1.4);
// calling any needs a kv: grant (hostmod's gate refuses the call without one).
var Funcs = []hostcall.Func[Call]{
	{Name: "kv_get", Params: hostcall.Sig(hostcall.I64, hostcall.I64), Results: hostcall.Sig(hostcall.I64), Grant: "kv",
		Fn: func(c Call, s []uint64) { s[0] = get(c, s[0], s[1]) }},
	{Name: "kv_set", Params: hostcall.Sig(hostcall.I64, hostcall.I64, hostcall.I64), Grant: "kv",
		Fn: func(c Call, s []uint64) { set(c, s[0], s[1], s[2]) }},
	{Name: "kv_delete", Params: hostcall.Sig(hostcall.I64, hostcall.I64), Grant: "kv",
		Fn: func(c Call, s []uint64) { del(c, s[0], s[1]) }},
	{Name: "kv_keys", Params: hostcall.Sig(hostcall.I64, hostcall.I64), Results: hostcall.Sig(hostcall.I64), Grant: "kv",
		Fn: func(c Call, s []uint64) { s[0] = keys(c, s[0], s[1]) }},
}

// namespace resolves a guest's namespace argument against the grants.
func namespace(c Call, nsOff uint64, op string) string {
	names := c.KV().Namespaces
	if c.Describing() {
		c.Deny("kv", op, hostcall.NoCapabilities)
	}
	if nsOff == 0 {
		switch len(names) {
		case 1:
			c.Use("kv:" + names[0])
			return names[0]
		case 0:
			c.Deny("kv", op, "the module has no kv: grant")
		default:
			c.Crash(fmt.Sprintf("%s: the module has %d kv namespaces; name one", op, len(names)))
		}
	}
	ns := string(c.Read(nsOff, op, maxKey))
	for _, n := range names {
		if n == ns {
			c.Use("kv:" + ns)
			return ns
		}
	}
	c.Deny("kv", fmt.Sprintf("%s in namespace %q", op, ns), fmt.Sprintf("the module has no kv:%s grant", ns))
	return ""
}

func key(c Call, off uint64, op string) []byte {
	k := c.View(off, op+" key")
	if len(k) == 0 || len(k) > maxKey {
		c.Crash(fmt.Sprintf("%s: keys are 1 to %d bytes, got %d", op, maxKey, len(k)))
	}
	return bytes.Clone(k)
}

// check ends the call on a store's failure: past the quota, its time up
// (a store another process holds waits for its turn until the call's
// deadline), or a crash naming the error.
func check(c Call, err error) {
	if err == nil {
		return
	}
	if errors.Is(err, errQuota) {
		c.Exceed(hostcall.LimitKVNamespace)
	}
	c.CheckStop()
	ctx := c.Context()
	if ctx.Err() != nil {
		c.TimeUp()
	}
	if dl, ok := ctx.Deadline(); ok && time.Now().After(dl) {
		c.TimeUp()
	}
	c.Crash(err.Error())
}

func get(c Call, nsOff, keyOff uint64) uint64 {
	ns := namespace(c, nsOff, "kv_get")
	k := key(c, keyOff, "kv_get")
	var (
		v       []byte
		tainted bool
	)
	check(c, c.KV().Stores.view(c.Context(), ns, func(tx *bolt.Tx, b *bolt.Bucket) error {
		if b != nil {
			v = bytes.Clone(b.Get(k))
		}
		if tb := taintOf(tx); v != nil && tb != nil {
			tainted = tb.Get(k) != nil
		}
		return nil
	}))
	if v == nil {
		return 0
	}
	if tainted {
		c.Taint()
	}
	return c.WritePresent(v)
}

func set(c Call, nsOff, keyOff, valOff uint64) {
	ns := namespace(c, nsOff, "kv_set")
	k := key(c, keyOff, "kv_set")
	limits := c.Limits()
	v := c.ReadLimited(valOff, "kv_set value", hostcall.LimitKVValue, limits.KVValue)
	if v == nil {
		v = []byte{}
	}
	charge(c, entrySize(k, v))
	check(c, c.KV().Stores.put(c.Context(), ns, k, v, limits.KVNamespace, c.Tainted()))
}

// charge counts a write of n bytes against the call's kv write limit,
// before it is made.
func charge(c Call, n int64) {
	w := c.KVWritten()
	*w += n
	if *w > c.Limits().KVWrite {
		c.Exceed(hostcall.LimitKVWrite)
	}
}

func del(c Call, nsOff, keyOff uint64) {
	ns := namespace(c, nsOff, "kv_delete")
	k := key(c, keyOff, "kv_delete")
	charge(c, entrySize(k, nil))
	check(c, c.KV().Stores.put(c.Context(), ns, k, nil, c.Limits().KVNamespace, false))
}

func keys(c Call, nsOff, prefixOff uint64) uint64 {
	ns := namespace(c, nsOff, "kv_keys")
	var prefix []byte
	if prefixOff != 0 {
		prefix = c.Read(prefixOff, "kv_keys prefix", maxKey)
	}
	// The listing is written as JSON as it is read, and cut at maxKeys
	// keys or maxKeysBytes of JSON: a key of control bytes takes six
	// times its length once escaped.
	out := bytes.NewBuffer(make([]byte, 0, 256))
	out.WriteByte('[')
	n := 0
	tainted := false
	check(c, c.KV().Stores.view(c.Context(), ns, func(tx *bolt.Tx, b *bolt.Bucket) error {
		if b == nil {
			return nil
		}
		// A key is data too: one a tainted caller chose taints the list.
		tb := taintOf(tx)
		cur := b.Cursor()
		for k, _ := cur.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && n < maxKeys; k, _ = cur.Next() {
			q, err := json.Marshal(string(k))
			if err != nil {
				return err
			}
			if out.Len()+len(q)+2 > maxKeysBytes {
				break
			}
			if n > 0 {
				out.WriteByte(',')
			}
			out.Write(q)
			n++
			tainted = tainted || tb != nil && tb.Get(k) != nil
		}
		return nil
	}))
	out.WriteByte(']')
	if tainted {
		c.Taint()
	}
	return c.Write(out.Bytes())
}
