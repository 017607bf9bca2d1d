//go:build linux || darwin || freebsd

package plugindir

import (
	"os"
	"syscall"
)

// fileKey is what identifies one state of a file: which file it is
// (device and inode), its size, and when its data and inode last changed.
// Any write changes ctime, which only the kernel sets, so an unchanged key
// means unchanged bytes.
type fileKey struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // nanoseconds
}

// statKey returns path's key (following a link, as reading it does), or
// false when there is none to trust.
func statKey(path string) (fileKey, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileKey{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}, false
	}
	return fileKey{
		dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size,
		mtime: statMtime(st), ctime: statCtime(st),
	}, true
}
