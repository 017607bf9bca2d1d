package loop

// Unexported names the external tests use, as the tests name them.
const (
	FindToolsName              = findToolsName
	StateVersion               = stateVersion
	DefaultToolSearchThreshold = defaultToolSearchThreshold
)
