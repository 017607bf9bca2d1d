package remote

import (
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/autoagent-go/autoagent/internal/backend"
	"github.com/autoagent-go/autoagent/memory"
)

// versions is the go-plugin version map: the serving side registers the
// memory service with impl, the host side (impl nil) gets a stub.
func versions(impl memory.Memory) map[int]plugin.PluginSet {
	return backend.Versions(backend.KindMemory, &backend.GRPCPlugin{
		Desc: &serviceDesc, Impl: &server{m: impl},
		Stub: func(c *grpc.ClientConn) any { return &stub{conn: c} },
	})
}
