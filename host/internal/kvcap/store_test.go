package kvcap

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// TestKVQuotaCountsEntries: each entry counts its key, its value and
// entryOverhead, so many empty entries reach the quota too; replacing
// and deleting give their bytes back.
func TestKVQuotaCountsEntries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := NewStores(t.TempDir())
	const per = 1 + 64 // a one-byte key, an empty value and the overhead
	quota := int64(10 * per)
	for i := range 10 {
		if err := s.put(ctx, "q", []byte{byte('a' + i)}, []byte{}, quota, false); err != nil {
			t.Fatalf("entry %d of 10: %v", i, err)
		}
	}
	if err := s.put(ctx, "q", []byte("k"), []byte{}, quota, false); !errors.Is(err, errQuota) {
		t.Fatalf("the 11th empty entry: %v, want the quota", err)
	}
	// Replacing an entry with a same-sized one fits; a larger one does not.
	if err := s.put(ctx, "q", []byte("a"), []byte{}, quota, false); err != nil {
		t.Fatalf("replacing an entry: %v", err)
	}
	if err := s.put(ctx, "q", []byte("a"), []byte("x"), quota, false); !errors.Is(err, errQuota) {
		t.Fatalf("growing an entry past the quota: %v", err)
	}
	if err := s.put(ctx, "q", []byte("a"), nil, quota, false); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	if err := s.put(ctx, "q", []byte("k"), []byte{}, quota, false); err != nil {
		t.Fatalf("an entry after a delete: %v", err)
	}
}

// TestOldStoreReadsUntainted: a store written before taint was kept (no
// taint bucket) reads back as untainted, and takes tainted writes.
func TestOldStoreReadsUntainted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, "old.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket(kvBucket)
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte("v"))
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	s := NewStores(dir)
	marked := func(key string) (bool, error) {
		var got bool
		err := s.view(context.Background(), "old", func(tx *bolt.Tx, _ *bolt.Bucket) error {
			got = taintOf(tx) != nil && taintOf(tx).Get([]byte(key)) != nil
			return nil
		})
		return got, err
	}
	if got, err := marked("k"); err != nil || got {
		t.Fatalf("an old store's entry: tainted %v, %v", got, err)
	}
	if err := s.put(context.Background(), "old", []byte("t"), []byte("x"), 1<<20, true); err != nil {
		t.Fatal(err)
	}
	if got, err := marked("t"); err != nil || !got {
		t.Fatalf("a tainted write to an old store: tainted %v, %v", got, err)
	}
	if got, _ := marked("k"); got {
		t.Fatal("the old entry became tainted")
	}
}
