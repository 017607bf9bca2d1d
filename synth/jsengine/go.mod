module github.com/autoagent-go/autoagent/synth/jsengine

go 1.26.0

require (
	github.com/autoagent-go/autoagent/pdk/go v0.0.0
	github.com/dop251/goja v0.0.0-20260917113740-793a2a65c13b
)

require (
	github.com/dlclark/regexp2/v2 v2.5.2 // indirect
	github.com/go-sourcemap/sourcemap v2.1.3+incompatible // indirect
	github.com/google/pprof v0.0.0-20230207041349-798e818bf904 // indirect
	golang.org/x/text v0.3.8 // indirect
)

// The Go PDK is not published: the engine's host binding (package extism)
// comes from the checkout's pdk/go.
replace github.com/autoagent-go/autoagent/pdk/go => ../../pdk/go
