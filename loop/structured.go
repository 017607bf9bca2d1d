package loop

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/tool"
)

// StructuredOutput asks for a final answer that is a JSON value of a
// schema. The zero value asks for none.
type StructuredOutput struct {
	// Schema, when set, is the JSON Schema the final answer must match:
	// every request asks the provider for it (OpenAI's response_format
	// json_schema, Gemini's responseSchema, an instruction for
	// Anthropic), the answer is validated, and one that does not match
	// goes back to the model with the validator's message, up to Retries
	// times; then the run fails with a *StructuredOutputError. The model
	// may call tools first. Result.Structured holds the value
	// (StructuredAs).
	Schema json.RawMessage
	// Name names the schema for the provider ("answer" when empty).
	Name string
	// Strict asks for strict enforcement where offered (OpenAI's strict,
	// which needs additionalProperties false and every property
	// required).
	Strict bool
	// Retries caps the answers sent back for not matching; 0 means 2, a
	// negative value none.
	Retries int
}

// defaultOutputRetries is StructuredOutput.Retries when it is 0.
const defaultOutputRetries = 2

// ErrStructuredOutput is wrapped by the error of a run whose answer never
// matched Agent.Structured.Schema.
var ErrStructuredOutput = errors.New("loop: the answer does not match the output schema")

// StructuredOutputError carries the last answer that did not validate and
// the validator's message.
type StructuredOutputError struct {
	Last     string // the model's last answer
	Err      error  // why it does not match
	Attempts int    // answers given
}

func (e *StructuredOutputError) Error() string {
	return fmt.Sprintf("loop: after %d answers, the last one still does not match the output schema: %v", e.Attempts, e.Err)
}

// Unwrap makes errors.Is(err, ErrStructuredOutput) hold.
func (e *StructuredOutputError) Unwrap() error { return ErrStructuredOutput }

// StructuredAs decodes a run's structured answer (Result.Structured) into
// a T.
func StructuredAs[T any](res *Result) (T, error) {
	var v T
	if res == nil || len(res.Structured) == 0 {
		return v, errors.New("loop: the result holds no structured answer (Agent.Structured.Schema unset, or the run did not finish)")
	}
	err := json.Unmarshal(res.Structured, &v)
	return v, err
}

// outputFormat is what each request asks for when the agent has an output
// schema.
func (a *Agent) outputFormat() *llm.ResponseFormat {
	if len(a.Structured.Schema) == 0 {
		return nil
	}
	return &llm.ResponseFormat{Type: "json_schema", Name: cmp.Or(a.Structured.Name, "answer"), Schema: a.Structured.Schema, Strict: a.Structured.Strict}
}

// checkStructured validates an answer: the JSON (fences around it
// dropped) or the validator's complaint.
func checkStructured(s *tool.Schema, answer string) (json.RawMessage, error) {
	text := strings.TrimSpace(answer)
	if strings.HasPrefix(text, "```") {
		text = strings.TrimPrefix(strings.TrimPrefix(text, "```json"), "```")
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text), "```"))
	}
	if !json.Valid([]byte(text)) {
		return nil, errors.New("the answer is not JSON")
	}
	if err := s.Validate(json.RawMessage(text)); err != nil {
		return nil, err
	}
	return json.RawMessage(text), nil
}

// schemaCache holds output schemas compiled, by their text, for the runs
// that share them (compiling takes far longer than validating an answer):
// at most maxCachedSchemas; past it a schema is compiled per run.
var (
	schemaCache      sync.Map // string → *tool.Schema
	schemaCacheCount atomic.Int32
)

const maxCachedSchemas = 256

// compiledOutputSchema is Agent.Structured.Schema compiled, nil without one.
func (a *Agent) compiledOutputSchema() (*tool.Schema, error) {
	if len(a.Structured.Schema) == 0 {
		return nil, nil
	}
	key := string(a.Structured.Schema)
	if s, ok := schemaCache.Load(key); ok {
		return s.(*tool.Schema), nil
	}
	s, err := tool.CompileSchema(a.Structured.Schema)
	if err != nil {
		return nil, fmt.Errorf("loop: Agent.Structured.Schema: %w", err)
	}
	if schemaCacheCount.Load() < maxCachedSchemas {
		if _, loaded := schemaCache.LoadOrStore(key, s); !loaded {
			schemaCacheCount.Add(1)
		}
	}
	return s, nil
}

func outputRetryMessage(err error) string {
	return "Your answer must be JSON matching the output schema, and it is not: " + err.Error() + ". Answer again with the JSON alone."
}

func (r *runner) outputRetries() int {
	switch n := r.a.Structured.Retries; {
	case n == 0:
		return defaultOutputRetries
	case n < 0:
		return 0
	default:
		return n
	}
}
