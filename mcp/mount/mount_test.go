package mount_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent"
	"github.com/autoagent-go/autoagent/mcp/mount"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// A server that cannot be reached fails New, naming which one, after the
// servers before it were connected (and are closed again).
func TestServersNameTheOneThatFails(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-server")
	_, err := autoagent.New(context.Background(), autoagent.Config{LLM: scripted.New(),
		Features: []autoagent.Feature{mount.Servers{{Command: []string{missing}}}}})
	if err == nil || !strings.Contains(err.Error(), "MCP server 1") {
		t.Errorf("New with a server that does not exist: %v; want an error naming MCP server 1", err)
	}
	if got := (mount.Servers{{URL: "http://x"}}).Protects(); got != nil {
		t.Errorf("Protects %v; an MCP server's files are its own", got)
	}
}
