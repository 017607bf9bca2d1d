package rewrite

import "testing"

// TestMergeDataBoundsTheZerosFilledIn: merging fills the gaps between
// segments with zeros, at most as many as the data section's own bytes
// (or 1 MiB): 200 000 one-byte segments 4 KiB apart, a 2 MB module, became
// one 800 MB segment (2.4 GiB to load).
func TestMergeDataBoundsTheZerosFilledIn(t *testing.T) {
	t.Parallel()
	const n = 100_000
	body := appendU32(nil, n)
	for i := range n {
		body = append(body, 0x00, 0x41)
		body = appendS32(body, int32(i*4097))
		body = append(body, 0x0b, 1, 0xaa)
	}
	out, count, ok := mergeData(body)
	if !ok {
		t.Fatal("mergeData declined")
	}
	if limit := max(len(body), 1<<20) + len(body); len(out) > limit {
		t.Fatalf("%d segments of %d bytes merged into %d bytes in %d segments, more than %d", n, len(body), len(out), count, limit)
	}
	if count >= n {
		t.Errorf("nothing was merged: %d segments", count)
	}
	// What memory holds is unchanged: every byte still lands where it did.
	r := reader{b: out}
	got := 0
	for range r.u32() {
		r.u32()
		r.byte()
		off := r.s32()
		r.byte()
		data := r.take(int(r.u32()))
		for j, b := range data {
			if b == 0xaa {
				if (int(off)+j)%4097 != 0 {
					t.Fatalf("a data byte at %d", int(off)+j)
				}
				got++
			}
		}
	}
	if got != n {
		t.Fatalf("%d data bytes after merging, want %d", got, n)
	}
}
