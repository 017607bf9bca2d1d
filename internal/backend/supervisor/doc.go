// Package supervisor runs one backend subprocess under go-plugin and keeps
// it usable: it starts the process on first use, hands calls the live
// instance, turns a crash or a lost connection into a typed error for the
// calls in flight, restarts the process for the next call with exponential
// backoff, replaces a process that stopped answering, reaps every process
// it started, and kills them all on Close.
//
// It knows nothing of what the backend serves: the caller gives it the
// go-plugin plugin set and the name to dispense, and gets back whatever
// that plugin's client constructor returned.
package supervisor
