package manifest

import (
	"testing"

	"github.com/gofrs/flock"
)

func newTestLock(t *testing.T, path string) *flock.Flock {
	t.Helper()
	lk := flock.New(path)
	ok, err := lk.TryLock()
	if err != nil || !ok {
		t.Fatalf("locking %s: %v %v", path, ok, err)
	}
	return lk
}
