package autoagent

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/anthropic"
	"github.com/autoagent-go/autoagent/providers/gemini"
	"github.com/autoagent-go/autoagent/providers/openai"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// ProviderConfig selects and configures a model provider by name, the way
// the CLI's --provider, --model, --base-url and --api-key-env flags do.
// The zero value of every field but Name picks the provider's defaults.
type ProviderConfig struct {
	// Name is one of ProviderNames(): openai, anthropic, gemini, deepseek,
	// groq, openai-compatible, or scripted (an offline scripted model).
	Name string
	// Model is the model to use; DefaultModel(Name) when empty.
	Model string
	// BaseURL overrides the provider's endpoint. Required for
	// openai-compatible (for example http://localhost:11434/v1 for Ollama).
	BaseURL string
	// APIKeyEnv names the environment variable holding the API key;
	// DefaultAPIKeyEnv(Name) when empty. The key is read at each request,
	// never stored in the config.
	APIKeyEnv string
	// ScriptFile is the script the scripted provider plays (see package
	// providers/scripted for the format).
	ScriptFile string
	// HTTPClient, when set, sends every request (one persistent client per
	// provider either way).
	HTTPClient *http.Client
}

// ErrUnknownProvider is wrapped by NewProvider's error for a name it does
// not know.
var ErrUnknownProvider = errors.New("autoagent: unknown provider")

// ErrMissingSetting is wrapped by NewProvider's error when the provider
// needs a field the config leaves empty: BaseURL for openai-compatible,
// ScriptFile for scripted.
var ErrMissingSetting = errors.New("autoagent: provider setting missing")

var providerNames = []string{"openai", "anthropic", "gemini", "deepseek", "groq", "openai-compatible", "scripted"}

// ProviderNames lists the names NewProvider accepts.
func ProviderNames() []string { return slices.Clone(providerNames) }

// DefaultAPIKeyEnv returns the environment variable a provider reads its key
// from by default ("" for providers that need none). The providers apply
// these defaults themselves; this tells a caller which variable to set.
func DefaultAPIKeyEnv(name string) string {
	switch name {
	case "openai":
		return openai.DefaultAPIKeyEnv
	case "anthropic":
		return anthropic.DefaultAPIKeyEnv
	case "gemini":
		return gemini.DefaultAPIKeyEnv
	case "deepseek":
		return openai.DeepSeekAPIKeyEnv
	case "groq":
		return openai.GroqAPIKeyEnv
	}
	return ""
}

// DefaultModel returns the model a provider uses when none is given.
func DefaultModel(name string) string {
	switch name {
	case "openai":
		return "gpt-4o-mini"
	case "anthropic":
		return "claude-sonnet-4-20250514"
	case "gemini":
		return "gemini-2.5-flash"
	case "deepseek":
		return "deepseek-chat"
	case "groq":
		return "llama-3.3-70b-versatile"
	}
	return ""
}

// NewProvider builds the provider cfg names. Its error wraps
// ErrUnknownProvider for a name it does not know and ErrMissingSetting when
// the provider needs a field cfg leaves empty.
func NewProvider(cfg ProviderConfig) (llm.Provider, error) {
	name := strings.ToLower(strings.TrimSpace(cfg.Name))
	model := cmp.Or(cfg.Model, DefaultModel(name))
	// An empty APIKeyEnv is each provider's own default (DefaultAPIKeyEnv).
	oa := openai.Options{Model: model, BaseURL: cfg.BaseURL, APIKeyEnv: cfg.APIKeyEnv, HTTPClient: cfg.HTTPClient}
	switch name {
	case "openai":
		return openai.New(oa)
	case "deepseek":
		return openai.DeepSeek(oa)
	case "groq":
		return openai.Groq(oa)
	case "openai-compatible":
		if cfg.BaseURL == "" {
			return nil, fmt.Errorf("%w: openai-compatible needs a base URL (BaseURL, --base-url), e.g. http://localhost:11434/v1 for Ollama", ErrMissingSetting)
		}
		return openai.Compatible(cfg.BaseURL, oa)
	case "anthropic":
		return anthropic.New(anthropic.Options{Model: model, BaseURL: cfg.BaseURL, APIKeyEnv: cfg.APIKeyEnv, HTTPClient: cfg.HTTPClient})
	case "gemini":
		return gemini.New(gemini.Options{Model: model, BaseURL: cfg.BaseURL, APIKeyEnv: cfg.APIKeyEnv, HTTPClient: cfg.HTTPClient})
	case "scripted":
		if cfg.ScriptFile == "" {
			return nil, fmt.Errorf("%w: scripted needs a script file (ScriptFile, --script FILE)", ErrMissingSetting)
		}
		return scripted.Load(cfg.ScriptFile, scripted.Options{PerConversation: true})
	}
	return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknownProvider, cfg.Name, strings.Join(providerNames, ", "))
}
