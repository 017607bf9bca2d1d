package openai

import (
	"context"
	"io"
	"iter"
	"net/http"

	"github.com/autoagent-go/autoagent/internal/httpx"
	"github.com/autoagent-go/autoagent/internal/retry"
	"github.com/autoagent-go/autoagent/llm"
)

// Provider speaks the Chat Completions API of OpenAI and of every
// OpenAI-compatible server. It is safe for concurrent use; create one per
// configuration and share it, so its HTTP connections are reused.
type Provider struct {
	cfg   config
	retry retry.Policy
}

var _ llm.Provider = (*Provider)(nil)

// New returns a Provider configured by opts. It fails only for invalid
// options (a malformed BaseURL, an unknown MaxTokensField); a missing API
// key is reported by the first call, naming the environment variable.
func New(opts Options) (*Provider, error) {
	cfg, err := opts.config()
	if err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, retry: retry.ForRetries(opts.MaxRetries, DefaultMaxRetries, opts.OnRetry)}, nil
}

// DeepSeek returns a Provider for DeepSeek's API: opts with Name
// "deepseek", BaseURL DeepSeekBaseURL and the key in DEEPSEEK_API_KEY,
// unless opts sets them. Its reasoning_content is parsed and sent back, and
// its prompt_cache_hit_tokens reported as cached tokens.
func DeepSeek(opts Options) (*Provider, error) {
	return New(preset(opts, "deepseek", DeepSeekBaseURL, DeepSeekAPIKeyEnv))
}

// Groq returns a Provider for Groq's OpenAI-compatible API: Name "groq",
// BaseURL GroqBaseURL, key in GROQ_API_KEY, unless opts sets them.
func Groq(opts Options) (*Provider, error) {
	return New(preset(opts, "groq", GroqBaseURL, GroqAPIKeyEnv))
}

// Compatible returns a Provider for any OpenAI-compatible server at
// baseURL (the URL that "/chat/completions" is appended to, such as
// "http://localhost:11434/v1" for Ollama or "http://localhost:8080/v1" for
// llama.cpp). Name defaults to "openai-compatible". No key is required: it
// is sent when opts.APIKey is set or the variable opts.APIKeyEnv holds one.
func Compatible(baseURL string, opts Options) (*Provider, error) {
	if opts.BaseURL == "" {
		opts.BaseURL = baseURL
	}
	if opts.Name == "" {
		opts.Name = "openai-compatible"
	}
	opts.AllowNoAPIKey = true
	return New(opts)
}

func preset(opts Options, name, baseURL, env string) Options {
	if opts.Name == "" {
		opts.Name = name
	}
	if opts.BaseURL == "" {
		opts.BaseURL = baseURL
	}
	if opts.APIKeyEnv == "" {
		opts.APIKeyEnv = env
	}
	return opts
}

// Name returns the provider's name: "openai", a preset's name, or
// Options.Name.
func (p *Provider) Name() string { return p.cfg.Name }

// Complete sends req and returns the whole answer. Failures are
// *llm.ProviderError (retryable ones already retried), ctx.Err() (wrapped)
// when ctx ends, or an error wrapping [ErrNoAPIKey], [ErrNoModel] or
// [ErrInvalidRequest] when nothing could be sent.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	body, err := p.encode(req, false)
	if err != nil {
		return nil, err
	}
	send := func(ctx context.Context) (*http.Response, error) { return p.post(ctx, body, false) }
	return httpx.Complete(ctx, p.retry, p.cfg.Name, send, func(w *chatResponse, _ http.Header) (*llm.Response, error) {
		return p.toResponse(w)
	})
}

// Stream sends req with "stream": true and yields the answer as it
// arrives; see [llm.Provider]. Opening the stream is retried like
// Complete; a stream that breaks after it opened yields one error wrapping
// [llm.ErrIncompleteStream] and ends.
func (p *Provider) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		body, err := p.encode(req, true)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		send := func(ctx context.Context) (*http.Response, error) { return p.post(ctx, body, true) }
		err = httpx.Stream(ctx, p.retry, p.cfg.StreamIdleTimeout, send, func(ctx context.Context, body io.Reader, h http.Header) {
			p.readStream(ctx, body, h, yield)
		})
		if err != nil {
			yield(llm.StreamEvent{}, err)
		}
	}
}

// post sends one attempt of a chat request.
func (p *Provider) post(ctx context.Context, body []byte, stream bool) (*http.Response, error) {
	return p.postTo(ctx, p.cfg.endpoint, body, stream)
}
