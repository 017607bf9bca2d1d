package gemini

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/autoagent-go/autoagent/internal/httpx"
)

// Defaults used when the corresponding [Options] field is zero.
const (
	DefaultBaseURL   = "https://generativelanguage.googleapis.com/v1beta"
	DefaultAPIKeyEnv = "GEMINI_API_KEY"
	// DefaultMaxRetries is how many times a retryable failure (429, 5xx, a
	// dropped connection) is retried.
	DefaultMaxRetries = 2
	// DefaultStreamIdleTimeout ends a stream on which no byte arrived for
	// this long, so a server that goes silent cannot hang a run.
	DefaultStreamIdleTimeout = 5 * time.Minute
)

// ErrNoAPIKey is wrapped by the error of a call made without a key: none in
// the options, and the environment variable unset. The message names the
// variable. Nothing is sent then.
var ErrNoAPIKey = httpx.ErrNoAPIKey

// ErrNoModel is returned when neither the options nor the request name a
// model.
var ErrNoModel = errors.New("gemini: no model: set Options.Model or Request.Model")

// ErrInvalidRequest is wrapped by the error returned when an llm.Request
// cannot be expressed in the Gemini API (a remote image URL, a tool schema
// that is not JSON, ...). Nothing is sent then.
var ErrInvalidRequest = errors.New("gemini: invalid request")

// Options configures a [Provider]. The zero value works when
// GEMINI_API_KEY is set and each request names its model.
type Options struct {
	// APIKey is sent in the x-goog-api-key header (never in the URL,
	// where it would end up in logs). When empty the key is read from the
	// environment variable APIKeyEnv at each request, so a key set or
	// rotated later is picked up.
	APIKey string
	// APIKeyEnv names the environment variable holding the key;
	// DefaultAPIKeyEnv ("GEMINI_API_KEY") when empty.
	APIKeyEnv string
	// Model is the model used when a request does not name one, such as
	// "gemini-2.5-flash". A "models/" prefix is accepted.
	Model string
	// BaseURL replaces DefaultBaseURL (a proxy, a gateway, a test
	// server). "/models/MODEL:generateContent" is appended to it.
	BaseURL string
	// HTTPClient sends every request. One client is kept for the
	// provider's life so connections are reused; when nil the provider
	// makes its own persistent client. Bound calls with contexts.
	HTTPClient *http.Client
	// Headers are added to every request and override the adapter's own.
	Headers map[string]string
	// EmbeddingModel is the model Embed asks for; DefaultEmbeddingModel
	// when empty. A "models/" prefix is accepted.
	EmbeddingModel string
	// EmbeddingDimensions, when positive, asks Embed's model for vectors
	// of this length (outputDimensionality); 0 sends none.
	EmbeddingDimensions int
	// ExtraBody is deep-merged into every request body: nested objects
	// are merged key by key, anything else replaces what the adapter
	// wrote. Use it for fields this adapter does not model
	// (safetySettings, cachedContent, generationConfig.topK, Gemini 3's
	// toolConfig.functionCallingConfig.streamFunctionCallArguments, ...).
	ExtraBody map[string]any
	// MaxTokens is generationConfig.maxOutputTokens when the request sets
	// none; when both are zero the model's default applies.
	MaxTokens int
	// ThinkingBudget, when not nil, is sent as thinkingConfig.thinkingBudget
	// (Gemini 2.5: 0 turns thinking off where the model allows it, -1 lets
	// the model decide).
	ThinkingBudget *int
	// ThinkingLevel, when set, is sent as thinkingConfig.thinkingLevel
	// (Gemini 3: "low", "high").
	ThinkingLevel string
	// IncludeThoughts asks for thought summaries; they arrive as reasoning
	// parts and StreamReasoning deltas, never as answer text.
	IncludeThoughts bool
	// MaxRetries is how many times a retryable failure is retried with
	// exponential backoff and jitter, honouring Retry-After and the
	// RetryInfo of the error body; DefaultMaxRetries when zero, none when
	// negative. Only the opening of a stream is retried.
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
}

// config is Options after defaults and validation.
type config struct {
	apiKey      string
	apiKeyEnv   string
	idleTimeout time.Duration
	model       string
	base        string
	client      *http.Client
	headers     map[string]string
	extraBody   map[string]any
	maxTokens   int
	thinking    *wireThinkingConfig

	embeddingModel      string
	embeddingDimensions int
}

func (o Options) config() (config, error) {
	c := config{
		apiKey:    o.APIKey,
		model:     o.Model,
		client:    o.HTTPClient,
		headers:   o.Headers,
		extraBody: o.ExtraBody,
		maxTokens: o.MaxTokens,

		embeddingModel:      o.EmbeddingModel,
		embeddingDimensions: o.EmbeddingDimensions,
	}
	c.apiKeyEnv = o.APIKeyEnv
	if c.apiKeyEnv == "" {
		c.apiKeyEnv = DefaultAPIKeyEnv
	}
	base, err := httpx.BaseURL(providerName, o.BaseURL, DefaultBaseURL)
	if err != nil {
		return config{}, err
	}
	c.base = base
	if c.client == nil {
		c.client = httpx.NewClient()
	}
	if o.MaxTokens < 0 {
		return config{}, fmt.Errorf("%w: Options.MaxTokens is negative (%d)", ErrInvalidRequest, o.MaxTokens)
	}
	if o.EmbeddingDimensions < 0 {
		return config{}, fmt.Errorf("%w: Options.EmbeddingDimensions is negative (%d)", ErrInvalidRequest, o.EmbeddingDimensions)
	}
	if o.ThinkingBudget != nil || o.ThinkingLevel != "" || o.IncludeThoughts {
		c.thinking = &wireThinkingConfig{IncludeThoughts: o.IncludeThoughts, ThinkingLevel: o.ThinkingLevel}
		if o.ThinkingBudget != nil {
			b := *o.ThinkingBudget
			c.thinking.ThinkingBudget = &b
		}
	}
	c.idleTimeout = o.StreamIdleTimeout
	if c.idleTimeout == 0 {
		c.idleTimeout = DefaultStreamIdleTimeout
	}
	return c, nil
}

// key resolves the API key for one request.
func (c *config) key() (string, error) {
	return httpx.APIKey(providerName, c.apiKey, c.apiKeyEnv)
}
