# Code mode (package codemode): the model writes one program calling the
# run's tools, run in the sandbox's JavaScript engine (or the Python one,
# mk/python.mk) under the run's gate.
# The example (offline, scripted model) runs a 12-call task plainly and in
# code mode and prints the table of round trips, request bytes, tool calls
# and wall time; it fails when code mode misses its targets.

CODEMODE_PKGS := ./codemode/... ./examples/codemode/

.PHONY: test-codemode bench-codemode demo-codemode

test-codemode: synth-engine python-engine
	$(GO) test -race -count=1 $(CODEMODE_PKGS)

bench-codemode: synth-engine
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./codemode/jsprogram/

demo-codemode: synth-engine python-engine
	$(GO) run ./examples/codemode

demo: demo-codemode
