package retrieve

import "fmt"

// The defaults of [Config].
const (
	DefaultK        = 8
	DefaultShare    = 0.1
	DefaultMaxBytes = 16 << 10
)

// Config is the agent loop's retrieval stage (loop.Agent.Knowledge.Retrieval):
// before each model call, Retriever is asked for passages relevant to the
// current question (the text of the last user message), and those not
// already in what the model is sent go before the question in one block
// ([Block]), bounded by Share of the context budget and by MaxBytes. The
// block is in what the model is sent only: the transcript, checkpoints
// and sessions never hold it. A passage marked untrusted is framed as
// data, and the run becomes tainted. Retrieval runs again only when the
// question changes. A failing retriever never fails the run: the call
// goes on without a block, and the error is traced (retrieved).
type Config struct {
	// Retriever finds the passages; nil turns the stage off.
	Retriever Retriever
	// K is how many passages are asked for; 0 means DefaultK.
	K int
	// Share is the block's part of the context budget (loop.Bounds'
	// ContextShare of the model's context window), in (0, 1]; 0 means
	// DefaultShare. A token counts as 3 bytes.
	Share float64
	// MaxBytes bounds the block whatever the window; 0 means
	// DefaultMaxBytes. With no known window it is the bound.
	MaxBytes int
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.K < 0:
		return fmt.Errorf("%w: K is %d; want 0 (default %d) or more", ErrInvalid, c.K, DefaultK)
	case c.Share < 0 || c.Share > 1:
		return fmt.Errorf("%w: Share is %v; want 0 (default %v) up to 1", ErrInvalid, c.Share, DefaultShare)
	case c.MaxBytes < 0:
		return fmt.Errorf("%w: MaxBytes is %d; want 0 (default %d) or more", ErrInvalid, c.MaxBytes, DefaultMaxBytes)
	}
	return nil
}
