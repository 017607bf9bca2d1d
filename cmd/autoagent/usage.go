package main

import "strings"

// isCobraUsage recognises the errors cobra itself returns for an unknown
// command or a wrong number of arguments, which are usage errors (exit 2).
// Cobra does not type them, so this is the one place that matches text.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "received ", "unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
