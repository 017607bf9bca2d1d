package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/autoagent-go/autoagent/llm"
)

var errTestSentinel = errors.New("test: sentinel")

type pathError struct {
	Path string
	Err  error
}

func (e *pathError) Error() string { return "bad " + e.Path + ": " + e.Err.Error() }
func (e *pathError) Unwrap() error { return e.Err }

type pathWire struct {
	Path string `json:"path"`
	Err  *Error `json:"err"`
}

var testCodec = &ErrorCodec{
	Sentinels: map[string]error{"test.sentinel": errTestSentinel},
	Types: []TypedError{{
		Name: "path",
		Encode: func(err error, encode func(error) *Error) (json.RawMessage, error, bool) {
			var pe *pathError
			if !errors.As(err, &pe) {
				return nil, nil, false
			}
			b, _ := json.Marshal(pathWire{Path: pe.Path, Err: encode(pe.Err)})
			return b, pe, true
		},
		Decode: func(raw json.RawMessage, decode func(*Error) error) (error, error) {
			var v pathWire
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, err
			}
			return &pathError{Path: v.Path, Err: decode(v.Err)}, nil
		},
	}},
}

// roundTrip encodes err, sends it through JSON as the wire does, and
// decodes it.
func roundTrip(t *testing.T, err error) error {
	t.Helper()
	b, jerr := json.Marshal(testCodec.Encode(err))
	if jerr != nil {
		t.Fatal(jerr)
	}
	var e *Error
	if jerr := json.Unmarshal(b, &e); jerr != nil {
		t.Fatal(jerr)
	}
	return testCodec.Decode(e)
}

func TestErrorRoundTrip(t *testing.T) {
	pe := &llm.ProviderError{Provider: "p", Status: 503, Code: "overloaded", Message: "busy",
		Retryable: true, RetryAfter: 1500 * time.Millisecond, RequestID: "r1", Err: context.DeadlineExceeded}
	tests := []struct {
		name   string
		err    error
		is     []error
		isNot  []error
		asProv bool
		asPath bool
	}{
		{"plain", errors.New("plain failure"), nil, []error{errTestSentinel, context.Canceled}, false, false},
		{"sentinel wrapped", fmt.Errorf("doing x: %w", errTestSentinel), []error{errTestSentinel}, []error{context.Canceled}, false, false},
		{"context", fmt.Errorf("op: %w", context.Canceled), []error{context.Canceled}, nil, false, false},
		{"provider itself", pe, []error{context.DeadlineExceeded}, nil, true, false},
		{"provider wrapped in sentinel", fmt.Errorf("%w: %w", errTestSentinel, pe), []error{errTestSentinel, context.DeadlineExceeded}, nil, true, false},
		{"typed wrapping sentinel", &pathError{Path: "/f", Err: fmt.Errorf("x: %w", errTestSentinel)}, []error{errTestSentinel}, nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := roundTrip(t, tt.err)
			if got.Error() != tt.err.Error() {
				t.Errorf("message %q, want %q", got, tt.err)
			}
			for _, s := range tt.is {
				if !errors.Is(got, s) {
					t.Errorf("lost errors.Is(%v)", s)
				}
			}
			for _, s := range tt.isNot {
				if errors.Is(got, s) {
					t.Errorf("gained errors.Is(%v)", s)
				}
			}
			var gp *llm.ProviderError
			if errors.As(got, &gp) != tt.asProv {
				t.Fatalf("errors.As ProviderError = %v, want %v", !tt.asProv, tt.asProv)
			}
			if tt.asProv && (gp.Status != 503 || gp.Code != "overloaded" || gp.RetryAfter != 1500*time.Millisecond || gp.RequestID != "r1" || !gp.Retryable || gp.Provider != "p") {
				t.Errorf("provider error fields: %+v", gp)
			}
			var pth *pathError
			if errors.As(got, &pth) != tt.asPath {
				t.Fatalf("errors.As pathError = %v, want %v", !tt.asPath, tt.asPath)
			}
			if tt.asPath && pth.Path != "/f" {
				t.Errorf("path = %q", pth.Path)
			}
		})
	}
	if _, ok := roundTrip(t, pe).(*llm.ProviderError); !ok {
		t.Error("a *llm.ProviderError does not come back as one")
	}
	if _, ok := roundTrip(t, &pathError{Path: "/g", Err: errors.New("e")}).(*pathError); !ok {
		t.Error("a typed error does not come back as itself")
	}
	if testCodec.Encode(nil) != nil || testCodec.Decode(nil) != nil {
		t.Error("nil does not stay nil")
	}
}
