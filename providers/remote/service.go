package remote

import (
	"context"
	"io"
	"iter"

	"google.golang.org/grpc"

	"github.com/autoagent-go/autoagent/internal/backend/wire"
	"github.com/autoagent-go/autoagent/llm"
)

// serviceName is the gRPC service of protocol version 1.
const serviceName = "autoagent.provider.v1.Provider"

// The wire messages of protocol version 1. Errors of the provider travel
// in the Error fields; a gRPC error means the transport failed.
type (
	infoRequest  struct{}
	infoResponse struct {
		// Name is the served provider's name (llm.Name), possibly empty.
		Name string `json:"name,omitempty"`
	}
	completeRequest struct {
		Request *llm.Request `json:"request"`
	}
	completeResponse struct {
		Response *llm.Response `json:"response,omitempty"`
		Error    *wire.Error   `json:"error,omitempty"`
	}
	streamEvent struct {
		Type     llm.StreamEventType `json:"type,omitempty"`
		Text     string              `json:"text,omitempty"`
		ToolCall *llm.ToolCall       `json:"tool_call,omitempty"`
		Response *llm.Response       `json:"response,omitempty"`
		Error    *wire.Error         `json:"error,omitempty"`
	}
)

// errorCodec knows the errors a provider returns: *llm.ProviderError and
// the context and llm sentinels.
var errorCodec = &wire.ErrorCodec{}

// service is what serviceDesc dispatches to.
type service interface {
	info(context.Context, *infoRequest) (*infoResponse, error)
	complete(context.Context, *completeRequest) (*completeResponse, error)
	stream(context.Context, *completeRequest, func(*streamEvent) error) error
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*service)(nil),
	Methods: []grpc.MethodDesc{
		wire.Unary(serviceName, "Info", service.info),
		wire.Unary(serviceName, "Complete", service.complete),
	},
	Streams: []grpc.StreamDesc{
		wire.ServerStream("Stream", service.stream),
	},
	Metadata: "autoagent provider protocol v1 (JSON codec " + wire.CodecName + ")",
}

// server serves a provider on the backend side.
type server struct{ p llm.Provider }

func (s *server) info(context.Context, *infoRequest) (*infoResponse, error) {
	return &infoResponse{Name: llm.Name(s.p)}, nil
}

func (s *server) complete(ctx context.Context, in *completeRequest) (*completeResponse, error) {
	resp, err := s.p.Complete(ctx, requestOf(in))
	if err != nil {
		return &completeResponse{Error: errorCodec.Encode(err)}, nil
	}
	return &completeResponse{Response: resp}, nil
}

// stream forwards the provider's events. When the host goes away, send
// fails, the loop stops and the provider's iterator sees yield == false;
// its context is the call's, which the host's cancellation ends.
func (s *server) stream(ctx context.Context, in *completeRequest, send func(*streamEvent) error) error {
	for ev, err := range s.p.Stream(ctx, requestOf(in)) {
		if err != nil {
			return send(&streamEvent{Error: errorCodec.Encode(err)})
		}
		if err := send(&streamEvent{Type: ev.Type, Text: ev.Text, ToolCall: ev.ToolCall, Response: ev.Response}); err != nil {
			return err
		}
	}
	return nil
}

// requestOf never hands a provider a nil request.
func requestOf(in *completeRequest) *llm.Request {
	if in.Request == nil {
		return &llm.Request{}
	}
	return in.Request
}

// stub calls the service on the host side.
type stub struct{ conn *grpc.ClientConn }

func (c *stub) info(ctx context.Context) (*infoResponse, error) {
	out := new(infoResponse)
	return out, wire.Invoke(ctx, c.conn, "/"+serviceName+"/Info", &infoRequest{}, out)
}

func (c *stub) complete(ctx context.Context, req *llm.Request) (*completeResponse, error) {
	out := new(completeResponse)
	return out, wire.Invoke(ctx, c.conn, "/"+serviceName+"/Complete", &completeRequest{Request: req}, out)
}

// stream yields the service's events and the transport error, if any, as
// the last element. io.EOF is not an error here; the caller decides what
// an end without the done event means.
func (c *stub) stream(ctx context.Context, req *llm.Request) iter.Seq2[*streamEvent, error] {
	return func(yield func(*streamEvent, error) bool) {
		st, err := wire.OpenStream(ctx, c.conn, &serviceDesc.Streams[0], "/"+serviceName+"/Stream", &completeRequest{Request: req})
		if err != nil {
			yield(nil, err)
			return
		}
		for {
			ev := new(streamEvent)
			err := st.RecvMsg(ev)
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}
