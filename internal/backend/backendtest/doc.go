// Package backendtest holds what the tests of backend hosts (providers/remote,
// memory/remote) share: markers through which a test backend process tells
// the test what it reached, and checks of the process's state in /proc.
//
//	// in the test backend:
//	backendtest.Mark(dir, "started")
//	// in the test:
//	backendtest.WaitForMarker(t, dir, "started")
//	backendtest.AssertReaped(t, pid)
package backendtest
