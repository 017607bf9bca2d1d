package remote

import (
	"context"
	"errors"

	"google.golang.org/grpc"

	"github.com/autoagent-go/autoagent/internal/backend/wire"
	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/memory"
)

// serviceName is the gRPC service of protocol version 1.
const serviceName = "autoagent.memory.v1.Memory"

// The optional interfaces a backend reports in Info.
const (
	ifaceRememberer = "rememberer"
	ifaceForgetter  = "forgetter"
	ifaceFlusher    = "flusher"
	// ifaceTaint: the backend carries a run's taint to its memory
	// (compactRequest.Tainted, rememberRequest.Tainted). A backend that
	// does not say so (an older build) is read as one that loses it.
	ifaceTaint = "taint"
)

// errUnsupported answers a call of an optional method the served memory
// does not implement (a host never makes one: it only offers the methods
// Info reported).
var errUnsupported = errors.New("memory backend: method not supported by this memory")

// The wire messages of protocol version 1. Errors of the memory travel in
// the Error fields; a gRPC error means the transport failed.
type (
	infoRequest  struct{}
	infoResponse struct {
		// Name describes the served memory (its Go type, or its Name()).
		Name string `json:"name,omitempty"`
		// Interfaces lists the optional interfaces it implements.
		Interfaces []string `json:"interfaces,omitempty"`
	}
	// Tainted carries memory.WithTaint across (a backend of an older
	// build ignores it).
	compactRequest struct {
		Messages []llm.Message `json:"messages"`
		Tainted  bool          `json:"tainted,omitempty"`
	}
	compactResponse struct {
		Messages []llm.Message `json:"messages"`
		Usage    *llm.Usage    `json:"usage,omitempty"`
		Error    *wire.Error   `json:"error,omitempty"`
	}
	recallRequest struct {
		Query string `json:"query"`
		K     int    `json:"k"`
	}
	recallResponse struct {
		Messages []llm.Message `json:"messages"`
		Error    *wire.Error   `json:"error,omitempty"`
	}
	rememberRequest struct {
		Text    string        `json:"text"`
		Subject string        `json:"subject,omitempty"`
		Source  memory.Source `json:"source,omitempty"`
		Tainted bool          `json:"tainted,omitempty"`
	}
	rememberResponse struct {
		Record memory.Record `json:"record"`
		Error  *wire.Error   `json:"error,omitempty"`
	}
	forgetRequest struct {
		ID int64 `json:"id"`
	}
	forgetResponse struct {
		Found bool        `json:"found"`
		Error *wire.Error `json:"error,omitempty"`
	}
	forgetMatchingRequest struct {
		Instruction string `json:"instruction"`
		DryRun      bool   `json:"dry_run,omitempty"`
	}
	forgetMatchingResponse struct {
		Records []memory.Record `json:"records"`
		Error   *wire.Error     `json:"error,omitempty"`
	}
	flushRequest  struct{}
	flushResponse struct {
		Error *wire.Error `json:"error,omitempty"`
	}
)

// service is what serviceDesc dispatches to.
type service interface {
	info(context.Context, *infoRequest) (*infoResponse, error)
	compact(context.Context, *compactRequest) (*compactResponse, error)
	recall(context.Context, *recallRequest) (*recallResponse, error)
	remember(context.Context, *rememberRequest) (*rememberResponse, error)
	forget(context.Context, *forgetRequest) (*forgetResponse, error)
	forgetMatching(context.Context, *forgetMatchingRequest) (*forgetMatchingResponse, error)
	flush(context.Context, *flushRequest) (*flushResponse, error)
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*service)(nil),
	Methods: []grpc.MethodDesc{
		wire.Unary(serviceName, "Info", service.info),
		wire.Unary(serviceName, "Compact", service.compact),
		wire.Unary(serviceName, "Recall", service.recall),
		wire.Unary(serviceName, "Remember", service.remember),
		wire.Unary(serviceName, "Forget", service.forget),
		wire.Unary(serviceName, "ForgetMatching", service.forgetMatching),
		wire.Unary(serviceName, "Flush", service.flush),
	},
	Metadata: "autoagent memory protocol v1 (JSON codec " + wire.CodecName + ")",
}

// keepsTaint is whether the backend keeps taint and says so: always,
// but for the tests' stand-in of an older build, which ignores it.
var keepsTaint = true

// server serves a memory on the backend side.
type server struct{ m memory.Memory }

func (s *server) info(context.Context, *infoRequest) (*infoResponse, error) {
	out := &infoResponse{Name: memoryName(s.m)}
	if keepsTaint {
		out.Interfaces = append(out.Interfaces, ifaceTaint)
	}
	if _, ok := s.m.(memory.Rememberer); ok {
		out.Interfaces = append(out.Interfaces, ifaceRememberer)
	}
	if _, ok := s.m.(memory.Forgetter); ok {
		out.Interfaces = append(out.Interfaces, ifaceForgetter)
	}
	if _, ok := s.m.(memory.Flusher); ok {
		out.Interfaces = append(out.Interfaces, ifaceFlusher)
	}
	return out, nil
}

func (s *server) compact(ctx context.Context, in *compactRequest) (*compactResponse, error) {
	if in.Tainted && keepsTaint {
		ctx = memory.WithTaint(ctx)
	}
	out, usage, err := s.m.Compact(ctx, in.Messages)
	return &compactResponse{Messages: out, Usage: usage, Error: errorCodec.Encode(err)}, nil
}

func (s *server) recall(ctx context.Context, in *recallRequest) (*recallResponse, error) {
	out, err := s.m.Recall(ctx, in.Query, in.K)
	return &recallResponse{Messages: out, Error: errorCodec.Encode(err)}, nil
}

func (s *server) remember(ctx context.Context, in *rememberRequest) (*rememberResponse, error) {
	r, ok := s.m.(memory.Rememberer)
	if !ok {
		return &rememberResponse{Error: errorCodec.Encode(errUnsupported)}, nil
	}
	if in.Tainted && keepsTaint {
		ctx = memory.WithTaint(ctx)
	}
	rec, err := r.Remember(ctx, in.Text, in.Subject, in.Source)
	return &rememberResponse{Record: rec, Error: errorCodec.Encode(err)}, nil
}

func (s *server) forget(ctx context.Context, in *forgetRequest) (*forgetResponse, error) {
	f, ok := s.m.(memory.Forgetter)
	if !ok {
		return &forgetResponse{Error: errorCodec.Encode(errUnsupported)}, nil
	}
	found, err := f.Forget(ctx, in.ID)
	return &forgetResponse{Found: found, Error: errorCodec.Encode(err)}, nil
}

func (s *server) forgetMatching(ctx context.Context, in *forgetMatchingRequest) (*forgetMatchingResponse, error) {
	f, ok := s.m.(memory.Forgetter)
	if !ok {
		return &forgetMatchingResponse{Error: errorCodec.Encode(errUnsupported)}, nil
	}
	recs, err := f.ForgetMatching(ctx, in.Instruction, in.DryRun)
	return &forgetMatchingResponse{Records: recs, Error: errorCodec.Encode(err)}, nil
}

func (s *server) flush(ctx context.Context, _ *flushRequest) (*flushResponse, error) {
	f, ok := s.m.(memory.Flusher)
	if !ok {
		return &flushResponse{}, nil // nothing works in the background
	}
	return &flushResponse{Error: errorCodec.Encode(f.Flush(ctx))}, nil
}

// stub calls the service on the host side.
type stub struct{ conn *grpc.ClientConn }

func (c *stub) call(ctx context.Context, method string, in, out any) error {
	return wire.Invoke(ctx, c.conn, "/"+serviceName+"/"+method, in, out)
}
