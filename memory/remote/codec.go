package remote

import (
	"encoding/json"
	"errors"

	"github.com/autoagent-go/autoagent/internal/backend/wire"
	"github.com/autoagent-go/autoagent/memory"
)

// errorCodec knows the errors a memory returns: the memory package's
// sentinels, *memory.CorruptStoreError, and (through the codec's base) a
// *llm.ProviderError from the memory's own model calls and the context
// errors. Both sides use it, so errors.Is and errors.As work on the host
// as they would in process.
var errorCodec = &wire.ErrorCodec{
	Sentinels: map[string]error{
		"memory.invalid_options":   memory.ErrInvalidOptions,
		"memory.summary_failed":    memory.ErrSummaryFailed,
		"memory.extraction_failed": memory.ErrExtractionFailed,
		"memory.forget_refused":    memory.ErrForgetRefused,
		"memory.empty_instruction": memory.ErrEmptyInstruction,
		"memory.empty_fact":        memory.ErrEmptyFact,
		"memory.no_provider":       memory.ErrNoProvider,
		"memory.identity_mismatch": memory.ErrIdentityMismatch,
	},
	Types: []wire.TypedError{{
		Name: "memory.corrupt_store",
		Encode: func(err error, encode func(error) *wire.Error) (json.RawMessage, error, bool) {
			var ce *memory.CorruptStoreError
			if !errors.As(err, &ce) {
				return nil, nil, false
			}
			b, jerr := json.Marshal(corruptStore{Path: ce.Path, Err: encode(ce.Err)})
			return b, ce, jerr == nil
		},
		Decode: func(raw json.RawMessage, decode func(*wire.Error) error) (error, error) {
			var c corruptStore
			if err := json.Unmarshal(raw, &c); err != nil {
				return nil, err
			}
			return &memory.CorruptStoreError{Path: c.Path, Err: decode(c.Err)}, nil
		},
	}},
}

// corruptStore is the wire form of *memory.CorruptStoreError.
type corruptStore struct {
	Path string      `json:"path"`
	Err  *wire.Error `json:"err,omitempty"`
}
