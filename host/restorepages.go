package host

import "bytes"

// resetPage is the unit in which reset compares an instance's memory with
// its snapshot.
const resetPage = 4096

// zeroPage is a page of zeros, to compare with.
var zeroPage [resetPage]byte

// zeroPages marks the pages of a snapshot's memory that hold only zeros
// (most of a Go guest's: its heap is reserved, not yet used).
func zeroPages(mem []byte) []bool {
	zero := make([]bool, (len(mem)+resetPage-1)/resetPage)
	for i := range zero {
		p := mem[i*resetPage : min((i+1)*resetPage, len(mem))]
		zero[i] = bytes.Equal(p, zeroPage[:len(p)])
	}
	return zero
}

// restorePages makes dst equal to src (its snapshot, as long), page by
// page, writing only the pages a call changed: a page is compared first,
// with zeros when the snapshot's is zero (zero: zeroPages of src). A call
// changes few of a memory's pages, and comparing reads less than copying
// reads and writes, and leaves the unchanged pages clean.
func restorePages(dst, src []byte, zero []bool) {
	for i, z := range zero {
		d := dst[i*resetPage : min((i+1)*resetPage, len(dst))]
		if z {
			if !bytes.Equal(d, zeroPage[:len(d)]) {
				clear(d)
			}
			continue
		}
		s := src[i*resetPage : i*resetPage+len(d)]
		if !bytes.Equal(d, s) {
			copy(d, s)
		}
	}
}
