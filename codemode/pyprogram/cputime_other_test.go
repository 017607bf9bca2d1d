//go:build !unix

package pyprogram_test

// cpuTime is not measured here: the benchmarks' CPU metrics read 0.
func cpuTime() int64 { return 0 }
