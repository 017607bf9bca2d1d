//go:build !unix

package synth

// cpuTime is not measured here: the benchmarks' CPU metrics read 0.
func cpuTime() int64 { return 0 }
