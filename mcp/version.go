package mcp

import (
	"runtime/debug"
	"sync"
)

const modulePath = "github.com/autoagent-go/autoagent"

// moduleVersion is the version of this module in the running binary,
// which the client and the server announce in the MCP handshake.
var moduleVersion = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	if bi.Main.Path != modulePath {
		v = ""
		for _, d := range bi.Deps {
			if d.Path == modulePath {
				v = d.Version
			}
		}
	}
	if v == "" || v == "(devel)" {
		return "devel"
	}
	return v
})
