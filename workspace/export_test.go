package workspace

// SetCrashHook sets the function commit calls at its crash points.
func SetCrashHook(f func(stage string)) { crashHook = f }

// CleanPath is cleanPath, for the fuzz test.
var CleanPath = cleanPath
