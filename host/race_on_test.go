//go:build race

package host

// raceEnabled: the race detector multiplies memory and time.
const raceEnabled = true
