package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/autoagent-go/autoagent/internal/sse"
	"github.com/autoagent-go/autoagent/llm"
)

func TestStreamError(t *testing.T) {
	live := context.Background()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	idle := fmt.Errorf("%w (50ms)", ErrStreamIdle)
	tooLarge := fmt.Errorf("%w: 17 MiB", sse.ErrEventTooLarge)
	for _, tt := range []struct {
		name                   string
		ctx                    context.Context
		err                    error
		wantProviderError      bool
		wantRetryable, wantInc bool
	}{
		{"connection dropped", live, io.ErrUnexpectedEOF, true, true, true},
		// The idle watchdog cancels ctx itself: still the server's fault.
		{"server went silent", ended, idle, true, true, true},
		{"caller cancelled", ended, io.ErrUnexpectedEOF, false, false, false},
		{"event over the limit", live, tooLarge, true, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := StreamError(tt.ctx, "p", "req_1", tt.err)
			var pe *llm.ProviderError
			if errors.As(err, &pe) != tt.wantProviderError {
				t.Fatalf("err = %#v, want a ProviderError: %v", err, tt.wantProviderError)
			}
			if !tt.wantProviderError {
				if !errors.Is(err, context.Canceled) {
					t.Errorf("err = %v, want one wrapping context.Canceled", err)
				}
				return
			}
			if pe.Provider != "p" || pe.RequestID != "req_1" || !errors.Is(err, tt.err) {
				t.Errorf("err = %#v, want provider, request id and the cause kept", pe)
			}
			if pe.Retryable != tt.wantRetryable || errors.Is(err, llm.ErrIncompleteStream) != tt.wantInc {
				t.Errorf("err = %v: retryable %v, incomplete %v; want %v, %v", err, pe.Retryable, errors.Is(err, llm.ErrIncompleteStream), tt.wantRetryable, tt.wantInc)
			}
		})
	}
}
