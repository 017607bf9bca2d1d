package kvcap

import (
	"context"
	"errors"
	"testing"
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
		if err := s.put(ctx, "q", []byte{byte('a' + i)}, []byte{}, quota); err != nil {
			t.Fatalf("entry %d of 10: %v", i, err)
		}
	}
	if err := s.put(ctx, "q", []byte("k"), []byte{}, quota); !errors.Is(err, errQuota) {
		t.Fatalf("the 11th empty entry: %v, want the quota", err)
	}
	// Replacing an entry with a same-sized one fits; a larger one does not.
	if err := s.put(ctx, "q", []byte("a"), []byte{}, quota); err != nil {
		t.Fatalf("replacing an entry: %v", err)
	}
	if err := s.put(ctx, "q", []byte("a"), []byte("x"), quota); !errors.Is(err, errQuota) {
		t.Fatalf("growing an entry past the quota: %v", err)
	}
	if err := s.put(ctx, "q", []byte("a"), nil, quota); err != nil {
		t.Fatalf("deleting: %v", err)
	}
	if err := s.put(ctx, "q", []byte("k"), []byte{}, quota); err != nil {
		t.Fatalf("an entry after a delete: %v", err)
	}
}
