# Loop, tracing and the scripted provider: tests, fuzzing, benchmarks and
# the prompt-injection demo (examples/injection, offline, scripted model).

LOOP_PKGS := ./loop/ ./policy/ ./trace/... ./providers/scripted/ ./examples/injection/
FUZZTIME ?= 30s

.PHONY: test-loop fuzz-loop bench-loop demo-injection

test-loop:
	$(GO) test -race -count=1 $(LOOP_PKGS)

# go test -fuzz takes one package and one target at a time.
fuzz-loop:
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./policy/
	$(GO) test -run '^$$' -fuzz '^FuzzTruncateMiddle$$' -fuzztime $(FUZZTIME) ./loop/
	$(GO) test -run '^$$' -fuzz '^FuzzRedact$$' -fuzztime $(FUZZTIME) ./trace/
	$(GO) test -run '^$$' -fuzz '^FuzzEncoder$$' -fuzztime $(FUZZTIME) ./trace/

# Loop overhead per step (tracing off and on) and 10 000 concurrent runs.
bench-loop:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./loop/

# A poisoned page asks the (scripted) model to e-mail a secret; the
# lethal-trifecta guard refuses it, then a human rejects it in approve mode.
demo-injection:
	$(GO) run ./examples/injection
	$(GO) run ./examples/injection -approve

demo: demo-injection
