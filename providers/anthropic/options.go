package anthropic

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/autoagent-go/autoagent/internal/httpx"
)

// Defaults used when the corresponding [Options] field is zero.
const (
	DefaultBaseURL   = "https://api.anthropic.com"
	DefaultAPIKeyEnv = "ANTHROPIC_API_KEY"
	// DefaultMaxTokens is sent as max_tokens, which the Messages API
	// requires, when neither the request nor the options set one.
	DefaultMaxTokens = 4096
	// DefaultMaxRetries is how many times a retryable failure (429, 5xx,
	// 529 overloaded, a dropped connection) is retried.
	DefaultMaxRetries = 2
	// DefaultStreamIdleTimeout ends a stream on which no byte arrived for
	// this long (Anthropic sends a ping at least every few seconds), so a
	// server that goes silent cannot hang a run.
	DefaultStreamIdleTimeout = 5 * time.Minute
	// APIVersion is the anthropic-version header this adapter speaks.
	APIVersion = "2023-06-01"
)

// ErrNoAPIKey is wrapped by the error of a call made without a key: none in
// the options, and the environment variable unset. The message names the
// variable. Nothing is sent then.
var ErrNoAPIKey = httpx.ErrNoAPIKey

// ErrNoModel is returned when neither the options nor the request name a
// model.
var ErrNoModel = errors.New("anthropic: no model: set Options.Model or Request.Model")

// ErrInvalidRequest is wrapped by the error returned when an llm.Request
// cannot be expressed in the Messages API (an image without bytes or URL,
// max_tokens not above the thinking budget, ...). Nothing is sent then.
var ErrInvalidRequest = errors.New("anthropic: invalid request")

// Options configures a [Provider]. The zero value works when
// ANTHROPIC_API_KEY is set and each request names its model.
type Options struct {
	// APIKey is sent as x-api-key. When empty the key is read from the
	// environment variable APIKeyEnv at each request, so a key set or
	// rotated later is picked up.
	APIKey string
	// APIKeyEnv names the environment variable holding the key;
	// DefaultAPIKeyEnv ("ANTHROPIC_API_KEY") when empty.
	APIKeyEnv string
	// Model is the model used when a request does not name one, such as
	// "claude-sonnet-4-20250514".
	Model string
	// BaseURL replaces DefaultBaseURL (a proxy, a gateway, a test server).
	// "/v1/messages" is appended to it.
	BaseURL string
	// HTTPClient sends every request. One client is kept for the
	// provider's life so connections are reused; when nil the provider
	// makes its own persistent client. Bound calls with contexts.
	HTTPClient *http.Client
	// Headers are added to every request and override the adapter's own
	// (use them for anthropic-beta flags).
	Headers map[string]string
	// ExtraBody is deep-merged into every request body: nested objects
	// are merged key by key, anything else replaces what the adapter
	// wrote. Use it for API fields this adapter does not model
	// (metadata, top_k, service_tier, ...).
	ExtraBody map[string]any
	// MaxTokens is max_tokens when the request sets none;
	// DefaultMaxTokens when zero.
	MaxTokens int
	// PromptCaching marks the system prompt, the last tool definition and
	// the end of the conversation with cache_control {"type":"ephemeral"},
	// so repeated prefixes are read from Anthropic's prompt cache. Cached
	// reads are reported in Usage.CachedTokens.
	PromptCaching bool
	// ThinkingBudget, when positive, enables extended thinking with this
	// many budget_tokens. Thinking blocks come back as reasoning parts
	// whose Signature must be (and is) sent back unchanged. max_tokens must
	// exceed the budget; when max_tokens was not set the default grows to
	// budget + DefaultMaxTokens.
	ThinkingBudget int
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
}

// config is Options after defaults and validation.
type config struct {
	apiKey         string
	apiKeyEnv      string
	model          string
	endpoint       string
	client         *http.Client
	headers        map[string]string
	extraBody      map[string]any
	maxTokens      int
	maxTokensSet   bool
	promptCaching  bool
	thinkingBudget int
	idleTimeout    time.Duration
}

func (o Options) config() (config, error) {
	c := config{
		apiKey:         o.APIKey,
		apiKeyEnv:      o.APIKeyEnv,
		model:          o.Model,
		client:         o.HTTPClient,
		headers:        o.Headers,
		extraBody:      o.ExtraBody,
		maxTokens:      o.MaxTokens,
		maxTokensSet:   o.MaxTokens > 0,
		promptCaching:  o.PromptCaching,
		thinkingBudget: o.ThinkingBudget,
		idleTimeout:    o.StreamIdleTimeout,
	}
	if c.apiKeyEnv == "" {
		c.apiKeyEnv = DefaultAPIKeyEnv
	}
	base, err := httpx.BaseURL(providerName, o.BaseURL, DefaultBaseURL)
	if err != nil {
		return config{}, err
	}
	c.endpoint = base + "/v1/messages"
	if c.client == nil {
		c.client = httpx.NewClient()
	}
	if o.MaxTokens < 0 {
		return config{}, fmt.Errorf("%w: Options.MaxTokens is negative (%d)", ErrInvalidRequest, o.MaxTokens)
	}
	if c.maxTokens == 0 {
		c.maxTokens = DefaultMaxTokens
	}
	if o.ThinkingBudget < 0 {
		return config{}, fmt.Errorf("%w: Options.ThinkingBudget is negative (%d)", ErrInvalidRequest, o.ThinkingBudget)
	}
	if c.thinkingBudget > 0 && c.maxTokensSet && c.maxTokens <= c.thinkingBudget {
		return config{}, fmt.Errorf("%w: Options.MaxTokens (%d) must exceed Options.ThinkingBudget (%d)", ErrInvalidRequest, c.maxTokens, c.thinkingBudget)
	}
	if c.idleTimeout == 0 {
		c.idleTimeout = DefaultStreamIdleTimeout
	}
	return c, nil
}

// key resolves the API key for one request.
func (c *config) key() (string, error) {
	return httpx.APIKey(providerName, c.apiKey, c.apiKeyEnv)
}
