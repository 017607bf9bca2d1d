package remote

import (
	"context"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/autoagent-go/autoagent/internal/backend"
	"github.com/autoagent-go/autoagent/llm"
)

// grpcPlugin is the go-plugin glue for protocol version 1: the serving side
// registers the provider service, the host side gets a stub.
type grpcPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	impl llm.Provider // serving side only
}

func (g *grpcPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(&serviceDesc, &server{p: g.impl})
	return nil
}

func (g *grpcPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &stub{conn: c}, nil
}

// versions is the go-plugin version map: protocol version → plugin set.
// A future version 2 is added beside 1, not instead of it.
func versions(impl llm.Provider) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{
		1: {backend.PluginName(backend.KindProvider): &grpcPlugin{impl: impl}},
	}
}
