// Package httpprovider builds one of the built-in HTTP providers (OpenAI,
// Anthropic, Gemini, DeepSeek, any OpenAI-compatible server) from the
// command line of the autoagent-provider-http backend, with the API key
// read by the backend itself: from its own environment or from a file. The
// host that starts the backend passes only the provider's name, model and
// endpoint, never the key.
package httpprovider

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/anthropic"
	"github.com/autoagent-go/autoagent/providers/gemini"
	"github.com/autoagent-go/autoagent/providers/openai"
)

// Providers lists the values --provider accepts.
var Providers = []string{"openai", "anthropic", "gemini", "deepseek", "openai-compatible"}

// Config is the backend's configuration.
type Config struct {
	// Provider is one of [Providers].
	Provider string
	// Model is the default model for requests that name none.
	Model string
	// BaseURL replaces the provider's endpoint; required for
	// openai-compatible.
	BaseURL string
	// APIKeyEnv names the variable of the backend's own environment that
	// holds the key; the provider's usual one when empty (OPENAI_API_KEY,
	// ANTHROPIC_API_KEY, GEMINI_API_KEY, DEEPSEEK_API_KEY). It is read at
	// each request, like the in-process providers do.
	APIKeyEnv string
	// APIKeyFile, when set, is a file holding the key (surrounding white
	// space ignored), read once at start; it takes precedence over
	// APIKeyEnv.
	APIKeyFile string
	// MaxRetries is as in the providers' options: 0 for their default,
	// negative for none.
	MaxRetries int
}

// ErrUsage is wrapped by configuration errors.
var ErrUsage = errors.New("autoagent-provider-http: usage")

// Parse reads a Config from the backend's arguments.
func Parse(args []string) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("autoagent-provider-http", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	c.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	return c, nil
}

// AddFlags defines --provider, --model, --base-url, --api-key-env,
// --api-key-file and --max-retries on fs, storing into c.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Provider, "provider", "", "provider: "+strings.Join(Providers, ", "))
	fs.StringVar(&c.Model, "model", "", "default model")
	fs.StringVar(&c.BaseURL, "base-url", "", "endpoint (required for openai-compatible)")
	fs.StringVar(&c.APIKeyEnv, "api-key-env", "", "variable of this process's environment holding the key")
	fs.StringVar(&c.APIKeyFile, "api-key-file", "", "file holding the key")
	fs.IntVar(&c.MaxRetries, "max-retries", 0, "retries of retryable failures (negative: none)")
}

// New returns the provider c describes. A key file that cannot be read,
// or is empty, is an error here; a missing key variable is reported by
// the first call, naming the variable.
func New(c Config) (llm.Provider, error) {
	var key string
	if c.APIKeyFile != "" {
		b, err := os.ReadFile(c.APIKeyFile)
		if err != nil {
			return nil, fmt.Errorf("autoagent-provider-http: read API key file: %w", err)
		}
		if key = strings.TrimSpace(string(b)); key == "" {
			return nil, fmt.Errorf("autoagent-provider-http: API key file %s is empty", c.APIKeyFile)
		}
	}
	oa := openai.Options{APIKey: key, APIKeyEnv: c.APIKeyEnv, Model: c.Model, BaseURL: c.BaseURL, MaxRetries: c.MaxRetries}
	switch c.Provider {
	case "openai":
		return openai.New(oa)
	case "deepseek":
		return openai.DeepSeek(oa)
	case "openai-compatible":
		if c.BaseURL == "" {
			return nil, fmt.Errorf("%w: --provider openai-compatible needs --base-url", ErrUsage)
		}
		return openai.Compatible(c.BaseURL, oa)
	case "anthropic":
		return anthropic.New(anthropic.Options{APIKey: key, APIKeyEnv: c.APIKeyEnv, Model: c.Model, BaseURL: c.BaseURL, MaxRetries: c.MaxRetries})
	case "gemini":
		return gemini.New(gemini.Options{APIKey: key, APIKeyEnv: c.APIKeyEnv, Model: c.Model, BaseURL: c.BaseURL, MaxRetries: c.MaxRetries})
	case "":
		return nil, fmt.Errorf("%w: --provider is required (%s)", ErrUsage, strings.Join(Providers, ", "))
	}
	return nil, fmt.Errorf("%w: unknown --provider %q (want %s)", ErrUsage, c.Provider, strings.Join(Providers, ", "))
}
