//go:build !(linux || darwin || freebsd)

package plugindir

// fileKey has nothing to hold here; ctime is there for the code that
// reads it, and is never set.
type fileKey struct{ ctime int64 }

// statKey has nothing to trust here: every reload reads every file.
func statKey(string) (fileKey, bool) { return fileKey{}, false }
