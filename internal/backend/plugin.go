package backend

import (
	"context"

	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// GRPCPlugin is the go-plugin glue of one protocol version of a backend
// service: the serving side registers Desc with Impl, the host side gets
// Stub's value for the connection (what the supervisor hands calls).
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	Desc *grpc.ServiceDesc
	// Impl implements Desc's HandlerType; the serving side only.
	Impl any
	// Stub wraps the host side's connection.
	Stub func(*grpc.ClientConn) any
}

// GRPCServer registers the service on the serving side.
func (g *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(g.Desc, g.Impl)
	return nil
}

// GRPCClient returns the host side's stub.
func (g *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return g.Stub(c), nil
}

// Versions is the go-plugin version map of a backend of kind k speaking
// protocol version 1 only. A future version 2 is added beside 1, not
// instead of it.
func Versions(k Kind, v1 *GRPCPlugin) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{1: {PluginName(k): v1}}
}
