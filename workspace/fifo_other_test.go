//go:build !unix

package workspace_test

import "testing"

// mkfifo skips the test: named pipes in a directory are a Unix thing.
func mkfifo(t *testing.T, _ string) {
	t.Skip("named pipes in a directory are a Unix thing")
}
