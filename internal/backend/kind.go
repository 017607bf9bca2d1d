package backend

import (
	"fmt"
	"regexp"
	"strings"
)

// Kind is what a backend serves.
type Kind string

// The kinds of backend.
const (
	// KindProvider serves the llm.Provider contract.
	KindProvider Kind = "provider"
	// KindMemory serves the memory.Memory contract and its optional
	// interfaces.
	KindMemory Kind = "memory"
)

// Kinds lists every kind, in the order listings show them.
var Kinds = []Kind{KindProvider, KindMemory}

// binaryPrefix starts every backend binary's name.
const binaryPrefix = "autoagent-"

// namePattern is what a backend NAME may look like: a lower-case word that
// is safe in a file name and on a command line.
var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// ValidName reports an error when name cannot be a backend name.
func ValidName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("backend: invalid backend name %q (use lower-case letters, digits, '.', '_' and '-')", name)
	}
	return nil
}

// BinaryName returns the file name of the backend of kind k called name,
// without any platform suffix (see [exeSuffix]).
func BinaryName(k Kind, name string) string {
	return binaryPrefix + string(k) + "-" + name
}

// ParseBinaryName splits a file name into its kind and backend name. It
// reports false for a file that is not named like a backend.
func ParseBinaryName(file string) (Kind, string, bool) {
	file = strings.TrimSuffix(file, exeSuffix)
	rest, ok := strings.CutPrefix(file, binaryPrefix)
	if !ok {
		return "", "", false
	}
	for _, k := range Kinds {
		if name, ok := strings.CutPrefix(rest, string(k)+"-"); ok && ValidName(name) == nil {
			return k, name, true
		}
	}
	return "", "", false
}
