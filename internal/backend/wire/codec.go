package wire

import (
	"context"
	"encoding/json"
	"errors"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
)

// CodecName is the gRPC content subtype of the JSON codec. It is specific
// to autoagent so a host program that registers its own "json" codec for
// other services cannot change how backends are spoken to.
const CodecName = "autoagent-json"

// jsonCodec marshals messages with encoding/json.
type jsonCodec struct{}

func (jsonCodec) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonCodec) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
func (jsonCodec) Name() string                       { return CodecName }

func init() { encoding.RegisterCodec(jsonCodec{}) }

// CallOption selects the JSON codec for one call.
func CallOption() grpc.CallOption { return grpc.CallContentSubtype(CodecName) }

// Invoke calls the unary method of conn with the JSON codec.
func Invoke(ctx context.Context, conn grpc.ClientConnInterface, method string, in, out any) error {
	return conn.Invoke(ctx, method, in, out, CallOption())
}

// Unary declares a unary JSON method of service whose server implements S.
func Unary[S, Req, Resp any](service, method string, fn func(S, context.Context, *Req) (*Resp, error)) grpc.MethodDesc {
	full := "/" + service + "/" + method
	return grpc.MethodDesc{
		MethodName: method,
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			in := new(Req)
			if err := dec(in); err != nil {
				return nil, err
			}
			if interceptor == nil {
				return fn(srv.(S), ctx, in)
			}
			info := &grpc.UnaryServerInfo{Server: srv, FullMethod: full}
			return interceptor(ctx, in, info, func(ctx context.Context, req any) (any, error) {
				return fn(srv.(S), ctx, req.(*Req))
			})
		},
	}
}

// ServerStream declares a server-streaming JSON method of service whose
// server implements S. fn receives the request and a send function for
// each response message; the stream's context ends when the client
// cancels.
func ServerStream[S, Req, Resp any](method string, fn func(S, context.Context, *Req, func(*Resp) error) error) grpc.StreamDesc {
	return grpc.StreamDesc{
		StreamName:    method,
		ServerStreams: true,
		Handler: func(srv any, stream grpc.ServerStream) error {
			in := new(Req)
			if err := stream.RecvMsg(in); err != nil {
				return err
			}
			return fn(srv.(S), stream.Context(), in, func(m *Resp) error { return stream.SendMsg(m) })
		},
	}
}

// OpenStream starts a server-streaming call of method with the JSON codec,
// sends in and closes the sending side. Receive with RecvMsg until io.EOF.
func OpenStream(ctx context.Context, conn grpc.ClientConnInterface, desc *grpc.StreamDesc, method string, in any) (grpc.ClientStream, error) {
	s, err := conn.NewStream(ctx, desc, method, CallOption())
	if err != nil {
		return nil, err
	}
	// io.EOF from SendMsg means the server already ended the call; its
	// status is what the first RecvMsg returns.
	if err := s.SendMsg(in); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if err := s.CloseSend(); err != nil {
		return nil, err
	}
	return s, nil
}
