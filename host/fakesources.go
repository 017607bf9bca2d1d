package host

import (
	mrand "math/rand/v2"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/sys"
)

// fakeEpoch is the wall time a deterministic host's modules see first.
var fakeEpoch = time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

// fakeSeed seeds the generator of modules without the random grant.
var fakeSeed = [32]byte{'a', 'u', 't', 'o', 'a', 'g', 'e', 'n', 't'}

// fakeStep is how far the fake clocks advance per reading.
const fakeStep = int64(time.Millisecond)

// fakeSources are a deterministic instance's clocks and generator: the
// wall clock starts at fakeEpoch and the monotonic one at zero, each
// advancing 1 ms per reading (time moves forward, so loops waiting for
// it end, but every run sees the same), and the generator is ChaCha8
// from fakeSeed. Only the guest's calls (one at a time) and the host
// between them (snapshot, restore) touch them.
type fakeSources struct {
	wall, mono int64 // the last readings, in nanoseconds
	rand       *mrand.ChaCha8
}

func newFakeSources() *fakeSources {
	return &fakeSources{wall: fakeEpoch - fakeStep, mono: -fakeStep, rand: mrand.NewChaCha8(fakeSeed)}
}

// config gives cfg the sources.
func (f *fakeSources) config(cfg wazero.ModuleConfig) wazero.ModuleConfig {
	return cfg.WithWalltime(f.walltime, sys.ClockResolution(time.Millisecond)).
		WithNanotime(f.nanotime, sys.ClockResolution(time.Millisecond)).
		WithRandSource(f.rand)
}

func (f *fakeSources) walltime() (int64, int32) {
	f.wall += fakeStep
	return f.wall / 1e9, int32(f.wall % 1e9)
}

func (f *fakeSources) nanotime() int64 {
	f.mono += fakeStep
	return f.mono
}

// fakeState is where an instance's fake sources stood: a snapshot of a
// deterministic module keeps it, so that an instance restored from the
// snapshot reads on from where the initialisers stopped reading, as one
// that ran them does.
type fakeState struct {
	wall, mono int64
	rand       []byte // the generator, marshalled
}

func (f *fakeSources) state() *fakeState {
	r, _ := f.rand.MarshalBinary() // it never fails
	return &fakeState{wall: f.wall, mono: f.mono, rand: r}
}

// resume makes f read on from s.
func (f *fakeSources) resume(s *fakeState) error {
	f.wall, f.mono = s.wall, s.mono
	// In place (the module's config holds the pointer), and from zero: a
	// used generator keeps the bytes a read left over, which unmarshalling
	// a state without them would not clear (found when a reset instance
	// drew other bytes than a restored one).
	*f.rand = mrand.ChaCha8{}
	return f.rand.UnmarshalBinary(s.rand)
}
