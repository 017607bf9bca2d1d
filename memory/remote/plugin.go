package remote

import (
	"context"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/autoagent-go/autoagent/internal/backend"
	"github.com/autoagent-go/autoagent/memory"
)

// grpcPlugin is the go-plugin glue for protocol version 1: the serving side
// registers the memory service, the host side gets a stub.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl memory.Memory // serving side only
}

func (g *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(&serviceDesc, &server{m: g.impl})
	return nil
}

func (g *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &stub{conn: c}, nil
}

// versions is the go-plugin version map: protocol version → plugin set.
// A future version 2 is added beside 1, not instead of it.
func versions(impl memory.Memory) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		1: {backend.PluginName(backend.KindMemory): &grpcPlugin{impl: impl}},
	}
}
