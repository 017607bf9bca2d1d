// Package extismcompat holds no code of its own: its tests run Extism's
// own test plugins (shared/fixtures/extism) under extism/go-sdk and under
// [github.com/autoagent-go/autoagent/host] with the same inputs, config and
// host functions, and compare the answers. They live in a package of their
// own so they run beside the host's tests: they are among the slowest.
package extismcompat
