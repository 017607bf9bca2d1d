// Command autoagent-provider-http is a provider backend: it serves one of
// the built-in HTTP providers (OpenAI, Anthropic, Gemini, DeepSeek, Groq, any
// OpenAI-compatible server) to an autoagent host over go-plugin, and reads
// the API key itself, so the host process never holds it.
//
// A host starts it (see providers/remote); run by hand it says so and exits.
//
//	--provider openai|anthropic|gemini|deepseek|openai-compatible
//	--model M          default model
//	--base-url URL     endpoint (required for openai-compatible)
//	--api-key-env VAR  variable of this process's environment holding the key
//	                   (default: OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, DEEPSEEK_API_KEY)
//	--api-key-file F   file holding the key (takes precedence)
//	--max-retries N    retries of retryable failures (negative: none)
//
// The host gives a backend a minimal environment, not its own, so the key
// reaches this process in one of two ways that bypass the host: a key
// file named with --api-key-file, or a wrapper script in the backends
// directory that sets the variable and execs this binary:
//
//	#!/bin/sh
//	# backends/autoagent-provider-openai
//	OPENAI_API_KEY="$(cat /run/secrets/openai)" exec /usr/local/bin/autoagent-provider-http --provider openai "$@"
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/autoagent-go/autoagent/llm"
	"github.com/autoagent-go/autoagent/providers/catalog"
	"github.com/autoagent-go/autoagent/providers/remote"
)

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// run serves the configured provider until the host is gone and returns
// the exit status: 2 for a usage error, 1 when the provider cannot be
// built.
func run(args []string, stderr io.Writer) int {
	cfg, err := catalog.ParseArgs("autoagent-provider-http", args, catalog.HTTPNames())
	if err == nil {
		var p llm.Provider
		if p, err = catalog.New(cfg); err == nil {
			remote.Serve(p)
			return 0
		}
	}
	fmt.Fprintln(stderr, err)
	if errors.Is(err, catalog.ErrUsage) {
		return 2
	}
	return 1
}
