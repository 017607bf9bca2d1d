# Providers: shared SSE/retry/HTTP packages, OpenAI family, routing,
# conformance suite. No build steps of their own; these targets run the
# area's tests, fuzzing and benchmarks.

PROVIDER_PKGS := ./internal/sse/ ./internal/retry/ ./internal/httpx/ ./providers/openai/ ./providers/routing/ ./providers/providertest/
FUZZTIME ?= 30s

.PHONY: test-providers fuzz-sse bench-providers

test-providers:
	$(GO) test -race -count=1 $(PROVIDER_PKGS)

fuzz-sse:
	$(GO) test -run '^$$' -fuzz FuzzRead -fuzztime $(FUZZTIME) ./internal/sse/

bench-providers:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./internal/sse/ ./providers/openai/
