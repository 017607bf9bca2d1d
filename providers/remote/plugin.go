package remote

import (
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/autoagent-go/autoagent/internal/backend"
	"github.com/autoagent-go/autoagent/llm"
)

// versions is the go-plugin version map: the serving side registers the
// provider service with impl, the host side (impl nil) gets a stub.
func versions(impl llm.Provider) map[int]plugin.PluginSet {
	return backend.Versions(backend.KindProvider, &backend.GRPCPlugin{
		Desc: &serviceDesc, Impl: &server{p: impl},
		Stub: func(c *grpc.ClientConn) any { return &stub{conn: c} },
	})
}
