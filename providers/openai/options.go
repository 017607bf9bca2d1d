package openai

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/autoagent-go/autoagent/internal/httpx"
)

// Defaults used when the corresponding [Options] field is zero, and the
// presets' endpoints.
const (
	DefaultBaseURL   = "https://api.openai.com/v1"
	DefaultAPIKeyEnv = "OPENAI_API_KEY"

	DeepSeekBaseURL   = "https://api.deepseek.com"
	DeepSeekAPIKeyEnv = "DEEPSEEK_API_KEY"

	GroqBaseURL   = "https://api.groq.com/openai/v1"
	GroqAPIKeyEnv = "GROQ_API_KEY"

	// DefaultMaxRetries is how many times a retryable failure (429, 5xx,
	// a dropped connection) is retried.
	DefaultMaxRetries = 2
	// DefaultStreamIdleTimeout ends a stream on which no byte arrived for
	// this long, so a server that goes silent cannot hang a run.
	DefaultStreamIdleTimeout = 5 * time.Minute
)

// The values of Options.MaxTokensField.
const (
	MaxTokens           = "max_tokens"
	MaxCompletionTokens = "max_completion_tokens"
)

// ErrNoAPIKey is wrapped by the error of a call made without a key: none in
// the options, and the environment variable unset. The message names the
// variable. Nothing is sent then.
var ErrNoAPIKey = httpx.ErrNoAPIKey

// ErrNoModel is returned when neither the options nor the request name a
// model.
var ErrNoModel = errors.New("openai: no model: set Options.Model or Request.Model")

// ErrInvalidRequest is wrapped by the error returned when an llm.Request
// cannot be expressed in Chat Completions (an image part without data or
// URL, a forced tool choice without a name). Nothing is sent then.
var ErrInvalidRequest = errors.New("openai: invalid request")

// Options configures a [Provider]. The zero value talks to OpenAI with the
// key in OPENAI_API_KEY; each request must then name its model.
type Options struct {
	// Name names the provider in errors and traces; "openai" when empty
	// ("deepseek", "groq", "openai-compatible" for the presets).
	Name string
	// APIKey is sent as "Authorization: Bearer <key>". When empty the key
	// is read from the environment variable APIKeyEnv at each request, so
	// a key set or rotated later is picked up.
	APIKey string
	// APIKeyEnv names the environment variable holding the key;
	// DefaultAPIKeyEnv when empty (no variable for [Compatible]).
	APIKeyEnv string
	// AllowNoAPIKey sends requests without an Authorization header when no
	// key is found, for local servers (llama.cpp, Ollama, vLLM) that need
	// none. [Compatible] sets it.
	AllowNoAPIKey bool
	// Model is the model used when a request does not name one.
	Model string
	// BaseURL replaces DefaultBaseURL; "/chat/completions" is appended. A
	// trailing slash is ignored.
	BaseURL string
	// HTTPClient sends every request. One client is kept for the
	// provider's life so connections are reused; when nil the provider
	// makes its own persistent client. Bound calls with contexts.
	HTTPClient *http.Client
	// Headers are added to every request after the Authorization header,
	// and may override it (an api-key header for a gateway, an
	// OpenAI-Organization, an HTTP-Referer).
	Headers map[string]string
	// ExtraBody is deep-merged into every request body as the last step:
	// nested objects are merged key by key, anything else replaces what the
	// adapter wrote. Use it for fields this adapter does not model
	// (reasoning_effort, thinking, seed, provider routing, ...).
	ExtraBody map[string]any
	// MaxTokens is sent when the request sets no MaxTokens; 0 sends none.
	MaxTokens int
	// MaxTokensField chooses the name of the length cap: MaxTokens or
	// MaxCompletionTokens. When empty it follows the model family: OpenAI's
	// reasoning models (o1, o3, o4, gpt-5) refuse max_tokens and get
	// max_completion_tokens; every other model gets max_tokens, which all
	// OpenAI-compatible servers understand.
	MaxTokensField string
	// OmitReasoning stops sending the reasoning_content of past assistant
	// messages back. By default it is sent back whenever a message has
	// reasoning: DeepSeek's thinking mode requires it for turns that
	// called tools (and ignores it elsewhere), and llama.cpp uses it to
	// continue a tool-calling turn. Set it for a server that rejects the
	// field.
	OmitReasoning bool
	// NoStreamUsage omits stream_options.include_usage from streamed
	// requests, for servers that reject it. Streamed answers then usually
	// report no usage.
	NoStreamUsage bool
	// MaxRetries is how many times a retryable failure is retried with
	// exponential backoff and jitter, honouring Retry-After;
	// DefaultMaxRetries when zero, none when negative. Only the opening of
	// a stream is retried, never a stream that already produced events.
	MaxRetries int
	// OnRetry, when set, is called before each wait for a retry with the
	// number of the attempt about to be made (2 for the first retry), the
	// *llm.ProviderError (or transport error) that caused it and the delay:
	// retries are otherwise invisible, so use it for logs and metrics.
	OnRetry func(attempt int, err error, delay time.Duration)
	// StreamIdleTimeout ends a stream with an error when no byte arrives
	// for this long; DefaultStreamIdleTimeout when zero, never when
	// negative.
	StreamIdleTimeout time.Duration
	// EmbeddingModel is the model Embed asks for; DefaultEmbeddingModel
	// when empty.
	EmbeddingModel string
	// EmbeddingDimensions, when positive, asks Embed's model for vectors
	// of this length (text-embedding-3 models shorten theirs); 0 sends
	// none.
	EmbeddingDimensions int
}

// config is Options after defaults and validation.
type config struct {
	Options
	endpoint   string
	embeddings string
}

func (o Options) config() (config, error) {
	c := config{Options: o}
	if c.Name == "" {
		c.Name = "openai"
	}
	if c.APIKeyEnv == "" && !c.AllowNoAPIKey {
		c.APIKeyEnv = DefaultAPIKeyEnv
	}
	base, err := httpx.BaseURL(c.Name, o.BaseURL, DefaultBaseURL)
	if err != nil {
		return config{}, err
	}
	c.endpoint = base + "/chat/completions"
	c.embeddings = base + "/embeddings"
	if c.HTTPClient == nil {
		c.HTTPClient = httpx.NewClient()
	}
	switch o.MaxTokensField {
	case "", MaxTokens, MaxCompletionTokens:
	default:
		return config{}, fmt.Errorf("%s: MaxTokensField %q is neither %q nor %q", c.Name, o.MaxTokensField, MaxTokens, MaxCompletionTokens)
	}
	if o.MaxTokens < 0 {
		return config{}, fmt.Errorf("%s: MaxTokens is negative (%d)", c.Name, o.MaxTokens)
	}
	if o.EmbeddingDimensions < 0 {
		return config{}, fmt.Errorf("%s: EmbeddingDimensions is negative (%d)", c.Name, o.EmbeddingDimensions)
	}
	if c.StreamIdleTimeout == 0 {
		c.StreamIdleTimeout = DefaultStreamIdleTimeout
	}
	return c, nil
}

// apiKey resolves the key for one request.
func (c *config) apiKey() (string, error) {
	if c.APIKey != "" {
		return c.APIKey, nil
	}
	if c.APIKeyEnv == "" {
		return "", nil // AllowNoAPIKey with no variable named
	}
	key, err := httpx.APIKey(c.Name, "", c.APIKeyEnv)
	if err != nil && c.AllowNoAPIKey {
		return "", nil
	}
	return key, err
}

// usesMaxCompletionTokens reports whether model belongs to a family that
// refuses max_tokens. A routing prefix ("openai/o3-mini") is ignored.
func usesMaxCompletionTokens(model string) bool {
	if i := strings.LastIndexByte(model, '/'); i >= 0 {
		model = model[i+1:]
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if model == p || strings.HasPrefix(model, p+"-") || strings.HasPrefix(model, p+".") {
			return true
		}
	}
	return false
}
