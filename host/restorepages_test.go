package host

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// restorePages leaves dst equal to the snapshot whatever a call wrote:
// zero and non-zero pages, the last page short, single bytes changed.
func TestRestorePagesRestoresEveryByte(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, size := range []int{0, 1, resetPage - 1, resetPage, 3*resetPage + 17, 64 * resetPage} {
		snap := make([]byte, size)
		for i := range snap {
			if (i/resetPage)%3 != 0 { // every third page zero
				snap[i] = byte(r.IntN(256))
			}
		}
		zero := zeroPages(snap)
		for i, z := range zero {
			p := snap[i*resetPage : min((i+1)*resetPage, size)]
			if z != bytes.Equal(p, make([]byte, len(p))) {
				t.Fatalf("size %d: page %d marked zero %v", size, i, z)
			}
		}
		for trial := range 50 {
			dst := bytes.Clone(snap)
			for range trial {
				if size > 0 {
					dst[r.IntN(size)] ^= byte(1 + r.IntN(255))
				}
			}
			restorePages(dst, snap, zero)
			if !bytes.Equal(dst, snap) {
				t.Fatalf("size %d, %d bytes changed: not restored", size, trial)
			}
		}
	}
}

// BenchmarkRestorePages: a 4 MiB memory, three quarters of it zeros in
// the snapshot, after a call that changed one page in twenty; against a
// whole copy.
func BenchmarkRestorePages(b *testing.B) {
	const size = 4 << 20
	snap := make([]byte, size)
	for i := range size / 4 {
		snap[i] = byte(i)
	}
	zero := zeroPages(snap)
	dst := bytes.Clone(snap)
	dirty := func() {
		for p := 0; p < size; p += 20 * resetPage {
			dst[p+7] ^= 0xff
		}
	}
	b.Run("pages", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			dirty()
			restorePages(dst, snap, zero)
		}
	})
	b.Run("copy", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			dirty()
			copy(dst, snap)
		}
	})
}
