package workspace

// SetCrashHook sets the function commit calls at its crash points.
func SetCrashHook(f func(stage string)) { crashHook = f }

// CleanPath is cleanPath, for the fuzz test.
var CleanPath = cleanPath

// Syncs is the number of fsyncs the workspaces of the process made.
func Syncs() int64 { return syncs.Load() }

// SetSwapHook sets the function that makes an exchange of files fail as
// on a file system that cannot do it.
func SetSwapHook(f func() bool) { swapHook = f }
