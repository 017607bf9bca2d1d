package memory

import "context"

// Rememberer is a [Memory] that stores facts on request: the host's own
// code, or the model through the remember tool.
type Rememberer interface {
	// Remember stores text as a current fact about subject (which may be
	// empty) asserted by source, and returns the stored record. Storing a
	// fact equal to a current one (ignoring case) refreshes and returns the
	// existing record instead of duplicating it. It returns [ErrEmptyFact]
	// for blank text. Under a context marked with [WithTaint] the fact is
	// stored Tainted (a refreshed one becomes so, and never stops being
	// so), and Recall returns it framed as untrusted. Safe for concurrent
	// use.
	Remember(ctx context.Context, text, subject string, source Source) (Record, error)
}

// Forgetter is a [Memory] that erases facts. Erasure is a hard delete: the
// record is gone from the store, unlike a contradiction, which only closes
// a fact's validity.
type Forgetter interface {
	// Forget erases the fact with this id, current or not, and reports
	// whether it existed.
	Forget(ctx context.Context, id int64) (bool, error)

	// ForgetMatching erases the current facts that instruction, written in
	// plain language ("forget my address"), truly targets, together with
	// their earlier versions, and returns copies of what it erased. With
	// dryRun it erases nothing and returns what it would erase.
	//
	// It is fail-closed: when it cannot be sure which facts are meant (the
	// model failed or answered anything but a clean list of the ids it was
	// shown) it erases nothing and returns an error wrapping
	// [ErrForgetRefused]. A blank instruction is [ErrEmptyInstruction].
	ForgetMatching(ctx context.Context, instruction string, dryRun bool) ([]Record, error)
}

// Flusher is a [Memory] that works in the background. Flush waits until
// the work started so far has finished (or ctx ends) and returns the errors
// of background work that failed since the previous Flush. Hosts call it
// before exiting and tests call it before checking results.
type Flusher interface {
	Flush(ctx context.Context) error
}
