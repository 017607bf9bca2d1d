package main

// main does nothing: built with -buildmode=c-shared the module is a WASI
// reactor whose `call` export serves each call (see call_wasip1.go), and on
// other platforms only the tests use this package.
func main() {}
