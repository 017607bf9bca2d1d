//go:build wasip1 && !toolbridge

package main

// hostBridge is nil: this build offers no host tools, and imports nothing
// that needs a grant.
var hostBridge bridge
