package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/autoagent-go/autoagent/tool"
)

// exposedName turns a server's tool name into one every model provider
// accepts ([tool.ValidName]): MCP allows names (dots, slashes, up to 128
// characters) that providers refuse. Characters outside [A-Za-z0-9_-]
// become '_', and a name still too long keeps its head and a short hash of
// the whole, so two long names stay distinct.
func exposedName(prefix, name string) string {
	full := prefix + name
	if tool.ValidName(full) {
		return full
	}
	var b strings.Builder
	for _, r := range full {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := b.String()
	if s == "" {
		s = "_"
	}
	if len(s) > 64 {
		sum := sha256.Sum256([]byte(full))
		s = s[:55] + "_" + hex.EncodeToString(sum[:4])
	}
	return s
}
