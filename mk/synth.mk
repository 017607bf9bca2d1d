# synth: the JavaScript engine that runs the tools models write
# (synth/jsengine, goja built for GOOS=wasip1, ~19 MB, not committed).
# `make synth-engine` builds both variants into .cache/synth when their
# sources changed, then compiles the engine to machine code into the host's
# disk cache (6-30 s the first time depending on load, shown with progress;
# a cache hit takes about a second), so tests and demos start at once. Offline
# afterwards: the goja module comes from the module cache.

SYNTH_ENGINE_DIR := synth/jsengine
SYNTH_CACHE      := .cache/synth
# The engine reaches the host through the Go PDK's binding (pdk/go/extism),
# so a change there rebuilds it.
SYNTH_ENGINE_SRC := $(wildcard $(SYNTH_ENGINE_DIR)/*.go) $(SYNTH_ENGINE_DIR)/go.mod $(SYNTH_ENGINE_DIR)/go.sum \
	$(filter-out %_test.go,$(wildcard pdk/go/extism/*.go)) pdk/go/go.mod
SYNTH_ENGINE_BUILD = cd $(SYNTH_ENGINE_DIR) && GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 $(GO) build -buildmode=c-shared -trimpath -ldflags="-s -w"

.PHONY: synth-engine synth-engine-tools test-synth bench-synth test-jsengine bench-jsengine

synth-engine: $(SYNTH_CACHE)/jsengine.wasm $(SYNTH_CACHE)/jsengine-tools.wasm
	@$(GO) run ./synth/internal/warmengine $(SYNTH_CACHE)/jsengine.wasm $(SYNTH_CACHE)/jsengine-tools.wasm

synth-engine-tools: $(SYNTH_CACHE)/jsengine-tools.wasm

$(SYNTH_CACHE)/jsengine.wasm: $(SYNTH_ENGINE_SRC)
	@mkdir -p $(@D)
	@echo "synth: building the JavaScript engine $@ (goja for wasip1; a minute the first time)"
	$(SYNTH_ENGINE_BUILD) -o $(CURDIR)/$@.tmp . && mv $(CURDIR)/$@.tmp $(CURDIR)/$@

$(SYNTH_CACHE)/jsengine-tools.wasm: $(SYNTH_ENGINE_SRC)
	@mkdir -p $(@D)
	@echo "synth: building the code-mode JavaScript engine $@ (-tags toolbridge)"
	$(SYNTH_ENGINE_BUILD) -tags toolbridge -o $(CURDIR)/$@.tmp . && mv $(CURDIR)/$@.tmp $(CURDIR)/$@

test-synth: synth-engine
	$(GO) test -race -count=1 ./synth/... ./examples/synthesize/...
	cd $(SYNTH_ENGINE_DIR) && $(GO) test -count=1 ./...

bench-synth: synth-engine bench-jsengine
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./synth/

test: synth-engine test-jsengine
bench: synth-engine bench-jsengine
demo: synth-engine

# The engine is its own Go module (built for wasip1), outside ./...: its
# native tests run here.
test-jsengine:
	cd $(SYNTH_ENGINE_DIR) && $(GO) test -count=1 ./...

# Native goja running the benchmark scripts, for the sandbox's ratio.
bench-jsengine:
	cd $(SYNTH_ENGINE_DIR) && $(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) .
