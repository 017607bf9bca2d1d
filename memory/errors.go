package memory

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with [errors.Is]; the messages are for people.
var (
	// ErrInvalidOptions is wrapped by every constructor error caused by a
	// bad option value.
	ErrInvalidOptions = errors.New("memory: invalid options")

	// ErrSummaryFailed is wrapped by the error Compact returns when the
	// model call that folds old turns into the summary failed. Nothing was
	// compacted and nothing was lost; the caller runs with its messages.
	ErrSummaryFailed = errors.New("memory: summary failed; compaction skipped")

	// ErrExtractionFailed is wrapped when the model call that turns old
	// turns into facts failed or answered something unusable. No fact was
	// changed and no message was dropped.
	ErrExtractionFailed = errors.New("memory: fact extraction failed; compaction skipped")

	// ErrForgetRefused is wrapped when ForgetMatching could not be sure
	// which facts the instruction targets (the model failed, or its answer
	// was not a clean list of the ids it was shown). Nothing was deleted.
	ErrForgetRefused = errors.New("memory: forget refused; nothing was deleted")

	// ErrEmptyInstruction is returned by ForgetMatching for a blank
	// instruction.
	ErrEmptyInstruction = errors.New("memory: forget instruction is empty")

	// ErrEmptyFact is returned by Remember for a blank fact.
	ErrEmptyFact = errors.New("memory: fact is empty")

	// ErrNoProvider is returned by operations that need a model when the
	// memory was built without one.
	ErrNoProvider = errors.New("memory: no model provider configured")

	// ErrIdentityMismatch is wrapped when a fact store file belongs to
	// another identity than the one the memory was built for.
	ErrIdentityMismatch = errors.New("memory: fact store belongs to another identity")
)

// CorruptStoreError reports a fact store file that exists but cannot be
// read as a store. The file is left untouched unless the caller opted into
// quarantine (see [JSONStoreOptions.QuarantineCorrupt]).
type CorruptStoreError struct {
	// Path is the file that could not be read.
	Path string
	// Err is what was wrong with it.
	Err error
}

func (e *CorruptStoreError) Error() string {
	return fmt.Sprintf("memory: fact store %s is corrupt (%v); fix or move the file, or set QuarantineCorrupt to move it aside and start empty", e.Path, e.Err)
}

func (e *CorruptStoreError) Unwrap() error { return e.Err }

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...)
}
