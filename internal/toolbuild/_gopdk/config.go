package pdk

// Config returns the value of the host-provided configuration key and
// whether it is set. The host passes environment variables granted with
// env:NAME here under their own names, along with any configuration the
// operator set for the module.
func Config(key string) (string, bool) { return configGet(key) }
