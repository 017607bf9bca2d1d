//go:build !unix

package workspace

import "io/fs"

// openNonblock is 0: there are no FIFOs to open here.
const openNonblock = 0

// links is 1: the hard link count is not read on this platform.
func links(fs.FileInfo) uint64 { return 1 }
