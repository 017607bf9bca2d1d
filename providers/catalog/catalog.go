// Package catalog builds a model provider by name. It is the one table of
// the providers this module ships, with their default models and key
// variables, shared by the root facade, the CLI (--provider), the HTTP
// provider backend (autoagent-provider-http) and the evaluations, so a
// name means the same provider, model and variable everywhere.
//
//	p, err := catalog.New(catalog.Config{Name: "groq"}) // reads GROQ_API_KEY
//	if err != nil {
//		return err // wraps catalog.ErrUnknown or catalog.ErrMissingSetting
//	}
//	res, err := p.Complete(ctx, &llm.Request{Messages: msgs})
//
// A provider not in the table is built with its own package
// (providers/openai, providers/anthropic, ...), which take every option.
package catalog

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/anthropic"
	"github.com/autoagent-go/autoagent/providers/gemini"
	"github.com/autoagent-go/autoagent/providers/openai"
	"github.com/autoagent-go/autoagent/providers/scripted"
)

// Config selects and configures a provider by name, the way the CLI's
// --provider, --model, --base-url and --api-key-env flags do. The zero
// value of every field but Name picks the provider's defaults.
type Config struct {
	// Name is one of Names(): openai, anthropic, gemini, deepseek, groq,
	// openai-compatible, or scripted (an offline scripted model).
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
	// APIKey, when set, is the key itself, sent instead of reading
	// APIKeyEnv (a backend that read it from a key file). Prefer APIKeyEnv
	// anywhere a config may be printed or stored.
	APIKey string
	// APIKeyFile, when set, is a file holding the key (surrounding white
	// space ignored), read once by New; APIKey wins over it, and it over
	// APIKeyEnv. A backend started by a host that must not see the key
	// reads it so.
	APIKeyFile string
	// ScriptFile is the script the scripted provider plays (see package
	// providers/scripted for the format).
	ScriptFile string
	// MaxRetries is how many times a retryable failure (429, 5xx, a
	// broken stream before any output) is retried: 0 for the provider's
	// default, negative for none.
	MaxRetries int
	// PromptCaching asks the provider to cache repeated prompt prefixes
	// where that takes a request option (Anthropic: cache_control marks);
	// OpenAI-compatible servers and Gemini cache by themselves.
	PromptCaching bool
	// HTTPClient, when set, sends every request (one persistent client per
	// provider either way).
	HTTPClient *http.Client
}

// String prints the config without its key.
func (c Config) String() string {
	key := ""
	if c.APIKey != "" {
		key = " api_key=[set]"
	}
	if c.APIKeyFile != "" {
		key += " api_key_file=" + c.APIKeyFile
	}
	return fmt.Sprintf("{name=%s model=%s base_url=%s api_key_env=%s%s}", c.Name, c.Model, c.BaseURL, c.APIKeyEnv, key)
}

// ErrUnknown is wrapped by New's error for a name it does not know.
var ErrUnknown = errors.New("unknown provider")

// ErrMissingSetting is wrapped by New's error when the provider needs a
// field the config leaves empty: BaseURL for openai-compatible, ScriptFile
// for scripted.
var ErrMissingSetting = errors.New("provider setting missing")

// entry is one row of the table.
type entry struct {
	name      string
	model     string // default model; "" where the caller must name one
	keyEnv    string // default key variable; "" where none is needed
	http      bool   // speaks HTTP to a server (a backend may serve it)
	needsBase bool
}

var table = []entry{
	{name: "openai", model: "gpt-4o-mini", keyEnv: openai.DefaultAPIKeyEnv, http: true},
	{name: "anthropic", model: "claude-sonnet-4-20250514", keyEnv: anthropic.DefaultAPIKeyEnv, http: true},
	{name: "gemini", model: "gemini-2.5-flash", keyEnv: gemini.DefaultAPIKeyEnv, http: true},
	{name: "deepseek", model: "deepseek-chat", keyEnv: openai.DeepSeekAPIKeyEnv, http: true},
	{name: "groq", model: "llama-3.3-70b-versatile", keyEnv: openai.GroqAPIKeyEnv, http: true},
	{name: "openai-compatible", http: true, needsBase: true},
	{name: "scripted"},
}

func lookup(name string) (entry, bool) {
	i := slices.IndexFunc(table, func(e entry) bool { return e.name == name })
	if i < 0 {
		return entry{}, false
	}
	return table[i], true
}

// Names lists the names New accepts.
func Names() []string {
	out := make([]string, len(table))
	for i, e := range table {
		out[i] = e.name
	}
	return out
}

// HTTPNames lists the names of the providers that speak HTTP to a server
// (all but scripted): those an HTTP backend can serve.
func HTTPNames() []string {
	var out []string
	for _, e := range table {
		if e.http {
			out = append(out, e.name)
		}
	}
	return out
}

// DefaultAPIKeyEnv returns the environment variable a provider reads its
// key from by default ("" for providers that need none, and for
// openai-compatible, whose servers often need none: give APIKeyEnv).
func DefaultAPIKeyEnv(name string) string {
	e, _ := lookup(normalize(name))
	return e.keyEnv
}

// DefaultModel returns the model a provider uses when none is given ("" for
// openai-compatible and scripted).
func DefaultModel(name string) string {
	e, _ := lookup(normalize(name))
	return e.model
}

func normalize(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// New builds the provider cfg names. Its error wraps ErrUnknown for a name
// it does not know and ErrMissingSetting when the provider needs a field
// cfg leaves empty.
func New(cfg Config) (llm.Provider, error) {
	name := normalize(cfg.Name)
	e, ok := lookup(name)
	if !ok {
		if name == "" {
			return nil, fmt.Errorf("%w: no provider named (want one of %s)", ErrUnknown, strings.Join(Names(), ", "))
		}
		return nil, fmt.Errorf("%w %q (want one of %s)", ErrUnknown, cfg.Name, strings.Join(Names(), ", "))
	}
	model := cmp.Or(cfg.Model, e.model)
	if e.needsBase && cfg.BaseURL == "" {
		return nil, fmt.Errorf("%w: %s needs a base URL (BaseURL, --base-url), e.g. http://localhost:11434/v1 for Ollama", ErrMissingSetting, name)
	}
	if cfg.APIKey == "" && cfg.APIKeyFile != "" {
		b, err := os.ReadFile(cfg.APIKeyFile)
		if err != nil {
			return nil, fmt.Errorf("read API key file: %w", err)
		}
		if cfg.APIKey = strings.TrimSpace(string(b)); cfg.APIKey == "" {
			return nil, fmt.Errorf("API key file %s is empty", cfg.APIKeyFile)
		}
	}
	// An empty APIKeyEnv is each provider's own default (the table's).
	oa := openai.Options{Model: model, BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, APIKeyEnv: cfg.APIKeyEnv, MaxRetries: cfg.MaxRetries, HTTPClient: cfg.HTTPClient}
	switch name {
	case "openai":
		return openai.New(oa)
	case "deepseek":
		return openai.DeepSeek(oa)
	case "groq":
		return openai.Groq(oa)
	case "openai-compatible":
		return openai.Compatible(cfg.BaseURL, oa)
	case "anthropic":
		return anthropic.New(anthropic.Options{Model: model, BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, APIKeyEnv: cfg.APIKeyEnv, MaxRetries: cfg.MaxRetries, HTTPClient: cfg.HTTPClient, PromptCaching: cfg.PromptCaching})
	case "gemini":
		return gemini.New(gemini.Options{Model: model, BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, APIKeyEnv: cfg.APIKeyEnv, MaxRetries: cfg.MaxRetries, HTTPClient: cfg.HTTPClient})
	case "scripted":
		if cfg.ScriptFile == "" {
			return nil, fmt.Errorf("%w: scripted needs a script file (ScriptFile, --script FILE)", ErrMissingSetting)
		}
		return scripted.Load(cfg.ScriptFile, scripted.Options{PerConversation: true})
	}
	// A row of the table without a case here is a defect of this file.
	panic("catalog: no constructor for " + name)
}
