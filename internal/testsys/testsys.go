// Package testsys gives tests the few process and file-system calls that
// exist only on Unix (FIFOs, signals to a pid, stopping a process), so test
// files build on every platform the module builds for: elsewhere the calls
// return errors.ErrUnsupported and the test skips or fails saying so.
//
//	if err := testsys.Mkfifo(path); err != nil {
//		t.Skipf("mkfifo: %v", err)
//	}
//	if err := testsys.Kill(pid); err != nil {
//		t.Fatal(err)
//	}
package testsys
