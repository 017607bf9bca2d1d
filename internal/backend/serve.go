package backend

import (
	"math"
	"os"

	"github.com/hashicorp/go-hclog"
	plugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// MaxMessageBytes bounds one request or response on the wire. Requests
// carry images, so gRPC's default of 4 MiB is too small.
const MaxMessageBytes = 256 << 20

// windowBytes is the HTTP/2 flow-control window of both sides. gRPC's
// 64 KiB default makes a request carrying an image or a long transcript
// wait for window updates, round trip after round trip, on a connection
// whose other end is on the same machine.
const windowBytes = 4 << 20

// DialOptions are the host side's gRPC options matching [Serve]'s.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithInitialWindowSize(windowBytes), grpc.WithInitialConnWindowSize(windowBytes)}
}

// Serve serves the version map to the host that started this process and
// returns when the host closes the connection. Run by hand, without the
// handshake cookie in its environment, it prints why it cannot run and
// exits with status 1.
func Serve(versions map[int]plugin.PluginSet) {
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: versions,
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(math.MaxInt32),
				grpc.InitialWindowSize(windowBytes), grpc.InitialConnWindowSize(windowBytes))...)
		},
		// Only warnings: the host keeps the end of stderr to explain a
		// crash, and go-plugin's debug lines would crowd out a panic.
		Logger: hclog.New(&hclog.LoggerOptions{Name: "autoagent-backend", Level: hclog.Warn, Output: os.Stderr}),
	})
}
