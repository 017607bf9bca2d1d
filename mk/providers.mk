# Providers: shared SSE/retry/HTTP packages, the OpenAI family, Anthropic,
# Gemini, routing, the conformance suite and the recorded-traffic test
# helpers. No build steps of their own; these targets run the area's
# tests, fuzzing and benchmarks.

PROVIDER_PKGS := ./internal/sse/ ./internal/retry/ ./internal/httpx/ ./internal/fixturetest/ ./providers/openai/ ./providers/anthropic/ ./providers/gemini/ ./providers/routing/ ./providers/providertest/
FUZZTIME ?= 30s

.PHONY: test-providers fuzz-sse fuzz-providers bench-providers

test-providers:
	$(GO) test -race -count=1 $(PROVIDER_PKGS)

fuzz-sse:
	$(GO) test -run '^$$' -fuzz FuzzRead -fuzztime $(FUZZTIME) ./internal/sse/

# go test -fuzz takes one package and one target at a time.
fuzz-providers: fuzz-sse
	$(GO) test -run '^$$' -fuzz '^FuzzReadStream$$' -fuzztime $(FUZZTIME) ./providers/anthropic/
	$(GO) test -run '^$$' -fuzz '^FuzzReadStream$$' -fuzztime $(FUZZTIME) ./providers/gemini/
	$(GO) test -run '^$$' -fuzz '^FuzzSanitizeSchema$$' -fuzztime $(FUZZTIME) ./providers/gemini/

bench-providers:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./internal/sse/ ./providers/openai/ ./providers/anthropic/ ./providers/gemini/
