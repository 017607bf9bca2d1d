package catalog

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
)

// ErrUsage is wrapped by ParseArgs's errors: the command line is wrong.
var ErrUsage = errors.New("usage")

// AddFlags defines --provider, --model, --base-url, --api-key-env,
// --api-key-file, --max-retries and --script on fs, storing into c: the
// flags of a program that builds one provider, such as a provider
// backend.
func (c *Config) AddFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Name, "provider", c.Name, "provider: "+strings.Join(Names(), ", "))
	fs.StringVar(&c.Model, "model", c.Model, "model (the provider's default when empty)")
	fs.StringVar(&c.BaseURL, "base-url", c.BaseURL, "endpoint (required for openai-compatible)")
	fs.StringVar(&c.APIKeyEnv, "api-key-env", c.APIKeyEnv, "environment variable holding the key ("+keyEnvHelp()+")")
	fs.StringVar(&c.APIKeyFile, "api-key-file", c.APIKeyFile, "file holding the key (wins over --api-key-env)")
	fs.IntVar(&c.MaxRetries, "max-retries", c.MaxRetries, "retries of retryable failures (0: the provider's default, negative: none)")
	fs.StringVar(&c.ScriptFile, "script", c.ScriptFile, "script file of the scripted provider")
}

// keyEnvHelp lists each provider's default key variable.
func keyEnvHelp() string {
	var parts []string
	for _, e := range table {
		if e.keyEnv != "" {
			parts = append(parts, e.name+": "+e.keyEnv)
		}
	}
	return "default " + strings.Join(parts, ", ")
}

// ParseArgs reads a Config from a command line of AddFlags's flags, for a
// program named name that accepts the providers allowed (every name when
// nil). --provider is required; arguments other than flags are refused.
// Its errors wrap ErrUsage.
func ParseArgs(name string, args []string, allowed []string) (Config, error) {
	var c Config
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	c.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		return Config{}, fmt.Errorf("%s: %w: %v", name, ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("%s: %w: unexpected argument %q", name, ErrUsage, fs.Arg(0))
	}
	if allowed == nil {
		allowed = Names()
	}
	c.Name = normalize(c.Name)
	switch e, known := lookup(c.Name); {
	case c.Name == "":
		return Config{}, fmt.Errorf("%s: %w: --provider is required (%s)", name, ErrUsage, strings.Join(allowed, ", "))
	case !known || !slices.Contains(allowed, c.Name):
		return Config{}, fmt.Errorf("%s: %w: unknown --provider %q (want %s)", name, ErrUsage, c.Name, strings.Join(allowed, ", "))
	case e.needsBase && c.BaseURL == "":
		return Config{}, fmt.Errorf("%s: %w: --provider %s needs --base-url", name, ErrUsage, c.Name)
	case c.Name == "scripted" && c.ScriptFile == "":
		return Config{}, fmt.Errorf("%s: %w: --provider scripted needs --script FILE", name, ErrUsage)
	}
	return c, nil
}
