//go:build !unix

package jsprogram_test

// cpuTime is not measured here: the benchmarks' CPU metrics read 0.
func cpuTime() int64 { return 0 }

// minorFaults is not measured here: the benchmarks' fault metrics read 0.
func minorFaults() int64 { return 0 }
