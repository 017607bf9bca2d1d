//go:build unix

package manifest

import (
	"fmt"
	"os"
	"syscall"
)

// privateFile refuses a trust store that another user owns or may write:
// whoever can write it can trust any manifest in this user's name.
func privateFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("manifest: trust store: %w", err)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("manifest: refusing the trust store %s: group or others may write it (mode %v); run chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("manifest: refusing the trust store %s: it belongs to user %d, not to you (%d)", path, st.Uid, os.Getuid())
	}
	return nil
}
