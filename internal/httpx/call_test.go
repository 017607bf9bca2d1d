package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

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

func TestIncompleteStream(t *testing.T) {
	err := IncompleteStream("p", "req_1", "message_stop")
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || !errors.Is(err, llm.ErrIncompleteStream) || !pe.Retryable ||
		pe.Provider != "p" || pe.RequestID != "req_1" || pe.Message != "stream ended before message_stop" {
		t.Fatalf("err = %#v, want a retryable ErrIncompleteStream naming what never came", err)
	}
}

func TestMalformedEvent(t *testing.T) {
	cause := errors.New("invalid character 'n'")
	data := "{not json" + strings.Repeat("é", 300)
	err := MalformedEvent("p", "req_1", "stream chunk", data, cause)
	var pe *llm.ProviderError
	if !errors.As(err, &pe) || pe.Retryable || !errors.Is(err, cause) || pe.Provider != "p" || pe.RequestID != "req_1" {
		t.Fatalf("err = %#v, want a final error keeping its cause", err)
	}
	if want := "malformed stream chunk (invalid character 'n'): " + Truncate(data, 200); pe.Message != want {
		t.Errorf("message = %q, want %q", pe.Message, want)
	}
	if len(pe.Message) > 300 || !utf8.ValidString(pe.Message) {
		t.Errorf("message is %d bytes (valid UTF-8: %v); want the data quoted short and whole", len(pe.Message), utf8.ValidString(pe.Message))
	}
}
