package manifest

import (
	"crypto/sha256"
	"encoding/hex"
)

// Sum returns the lower-case hex sha256 of module: the key an approval is
// bound to. Hash the bytes you are about to compile, not a path you will
// read again, so what was checked is what runs.
func Sum(module []byte) string {
	h := sha256.Sum256(module)
	return hex.EncodeToString(h[:])
}

// ValidSum reports whether s is a lower-case hex sha256 as [Sum] returns.
func ValidSum(s string) bool {
	if len(s) != sha256.Size*2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLowerHex(s[i]) {
			return false
		}
	}
	return true
}

// Short returns the first 12 hex digits of a sum, the form listings show;
// twelve digits keep accidental collisions out of any realistic directory.
func Short(sum string) string {
	if len(sum) <= 12 {
		return sum
	}
	return sum[:12]
}

func isLowerHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f')
}
