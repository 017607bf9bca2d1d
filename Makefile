# autoagent — build, test, demo, benchmarks.
#
# `make demo` and `make test` are the two commands a fresh machine needs;
# everything they depend on is installed by `make deps` (called by them),
# which runs the idempotent scripts in .ci/install.d/.
#
# Feature areas add their own rules in mk/*.mk (included at the end), so
# each area owns its build steps in one place.

GO      ?= go
BIN     := bin
PKGS    := ./...
BENCHTIME ?= 1s

# The JavaScript engine `make synth-engine` builds, named for everything
# make runs (tests, the demo, benchmarks): synth.FindEngine never searches
# a working directory's checkout for it (RATIONALE: "Why is the engine
# never taken from the working directory's checkout?"). A value already in
# the environment wins.
export AUTOAGENT_JS_ENGINE ?= $(CURDIR)/.cache/synth/jsengine.wasm

.PHONY: all build test demo bench benchcmp check lint deps plugins clean

all: build

deps:
	@for f in .ci/install.d/*.sh; do [ -f "$$f" ] || continue; bash "$$f" || exit 1; done

build:
	$(GO) build $(PKGS)
	$(GO) build -o $(BIN)/autoagent ./cmd/autoagent

test: deps
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)

# benchcmp: the working tree's benchmarks against BASE's, alternating short
# runs in the same session (see internal/benchcmp). Example:
#   make benchcmp BASE=fe5ec54 BASEPATCH=internal/benchcmp/patches/fe5ec54-gc.diff
BASE ?= HEAD
BENCHPKG ?= ./host
BENCHRE ?= ^Benchmark(CallWarm|CallFresh|CallPooled|Deadline)$$
ROUNDS ?= 30
benchcmp:
	$(GO) run ./internal/benchcmp -base $(BASE) -pkg $(BENCHPKG) -bench '$(BENCHRE)' -rounds $(ROUNDS) $(if $(BASEPATCH),-patch $(BASEPATCH))

check lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 $(PKGS)
	$(GO) mod tidy -diff
	@# The library and its tests build for every OS a Go user may embed it
	@# in; what needs Unix (process groups, file identity, FIFOs, signals)
	@# sits behind build tags (tests reach it through internal/testsys).
	GOOS=windows $(GO) vet $(PKGS)
	GOOS=darwin $(GO) vet $(PKGS)

# An offline, scripted run through the CLI with sandboxed tools (see
# examples/demo/demo.sh). The plugin modules are committed, so it needs no
# toolchain beyond Go.
demo: build
	./examples/demo/demo.sh

clean:
	rm -rf $(BIN)

-include mk/*.mk
