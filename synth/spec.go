package synth

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/autoagent-go/autoagent/tool"
)

// Spec is what a tool the model wrote says about itself: the name, the
// description and the input schema the calling model sees, and the
// capabilities (grant strings, docs/ARCHITECTURE.md §4) it asks for.
type Spec struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Capabilities []string        `json:"capabilities,omitempty"`
}

// emptySchema is the input schema of a tool that declares none.
var emptySchema = json.RawMessage(`{"type":"object"}`)

// rawOrObject returns s, or an empty object schema when s is empty.
func rawOrObject(s json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(s)) == 0 || bytes.Equal(bytes.TrimSpace(s), []byte("null")) {
		return emptySchema
	}
	return s
}

var nameJunk = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// SanitizeName turns what a model proposed into a tool name: runs of
// characters other than letters, digits and '_' become '_', the result is
// trimmed of '_' and lower-cased, prefixed with "tool_" when it starts with
// a digit, and cut to 64 bytes. It returns "" when nothing is left.
func SanitizeName(s string) string {
	s = strings.ToLower(strings.Trim(nameJunk.ReplaceAllString(s, "_"), "_"))
	if s == "" {
		return ""
	}
	if s[0] >= '0' && s[0] <= '9' {
		s = "tool_" + s
	}
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "_")
	}
	if !tool.ValidName(s) {
		return ""
	}
	return s
}
