package llm

import (
	"crypto/rand"
	"encoding/hex"
)

// NewCallID returns a fresh random tool-call id with the given prefix, for
// providers that send none (Gemini). 64 random bits make a collision within
// a run practically impossible.
func NewCallID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return prefix + hex.EncodeToString(b[:])
}
