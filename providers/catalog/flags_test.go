package catalog_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/catalog"
)

func TestParseArgsAndNew(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	os.WriteFile(keyFile, []byte("  k-123\n"), 0o600)
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	tests := []struct {
		args     []string
		name     string // provider name on success
		usageErr bool
		errHas   string
	}{
		{[]string{"--provider", "openai", "--model", "m"}, "openai", false, ""},
		{[]string{"--provider", "deepseek"}, "deepseek", false, ""},
		{[]string{"--provider", "groq"}, "groq", false, ""},
		{[]string{"--provider", "anthropic", "--api-key-file", keyFile}, "anthropic", false, ""},
		{[]string{"--provider", "gemini", "--api-key-env", "MY_KEY"}, "gemini", false, ""},
		{[]string{"--provider", "openai-compatible", "--base-url", "http://127.0.0.1:8080/v1"}, "openai-compatible", false, ""},
		{[]string{"--provider", "openai-compatible"}, "", true, "--base-url"},
		{[]string{"--provider", "scripted"}, "", true, "unknown --provider \"scripted\""}, // not an HTTP provider
		{[]string{"--provider", "mystery"}, "", true, "openai, anthropic"},
		{[]string{}, "", true, "--provider is required"},
		{[]string{"--bogus"}, "", true, "bogus"},
		{[]string{"--provider", "openai", "extra"}, "", true, "extra"},
		{[]string{"--provider", "openai", "--api-key-file", empty}, "", false, "is empty"},
		{[]string{"--provider", "openai", "--api-key-file", "/nonexistent/key"}, "", false, "read API key file"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cfg, err := catalog.ParseArgs("backend", tt.args, catalog.HTTPNames())
			var p llm.Provider
			if err == nil {
				p, err = catalog.New(cfg)
			}
			if tt.errHas == "" {
				if err != nil {
					t.Fatal(err)
				}
				if llm.Name(p) != tt.name {
					t.Errorf("provider %q, want %q", llm.Name(p), tt.name)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errHas) || errors.Is(err, catalog.ErrUsage) != tt.usageErr {
				t.Errorf("err = %v; want one mentioning %q (usage error: %v)", err, tt.errHas, tt.usageErr)
			}
		})
	}
	// Every name is allowed without a list; scripted then needs its script.
	if _, err := catalog.ParseArgs("x", []string{"--provider", "scripted"}, nil); !errors.Is(err, catalog.ErrUsage) || !strings.Contains(err.Error(), "--script") {
		t.Errorf("scripted without --script: %v", err)
	}
}

// The flags' help names every provider's key variable.
func TestAddFlagsHelpListsEveryKeyVariable(t *testing.T) {
	var c catalog.Config
	fs := newFlagSet()
	c.AddFlags(fs)
	usage := fs.Lookup("api-key-env").Usage
	for _, name := range catalog.Names() {
		if env := catalog.DefaultAPIKeyEnv(name); env != "" && !strings.Contains(usage, env) {
			t.Errorf("--api-key-env help %q omits %s", usage, env)
		}
	}
}

func newFlagSet() *flag.FlagSet { return flag.NewFlagSet("t", flag.ContinueOnError) }
