# Backends: provider and memory backends as go-plugin subprocesses
# (providers/remote, memory/remote, internal/backend, memory/sqlitestore)
# and the first-party backend binaries. `make backends` builds the binaries
# into bin/backends; point a host at them with
# AUTOAGENT_BACKENDS=bin/backends (or --backends). No code generation: the
# gRPC services use a JSON codec and hand-written service descriptions, so
# nothing beyond the Go toolchain is needed.

BACKEND_PKGS := ./providers/remote/ ./memory/remote/ ./memory/sqlitestore/ ./internal/backend/... \
	./cmd/autoagent-provider-http/ ./cmd/autoagent-memory-sqlite/
BACKEND_BINS := autoagent-provider-http autoagent-memory-sqlite

.PHONY: backends test-backends bench-backends

backends:
	@mkdir -p $(BIN)/backends
	@for b in $(BACKEND_BINS); do echo "$(GO) build -o $(BIN)/backends/$$b ./cmd/$$b"; $(GO) build -o $(BIN)/backends/$$b ./cmd/$$b || exit 1; done

build: backends

test-backends:
	$(GO) test -race -count=1 $(BACKEND_PKGS)
	$(GO) test -race -count=1 -run 'Backends' ./cmd/autoagent/

# go-plugin round trip per provider call and per memory recall, against the
# same implementation in process.
bench-backends:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) ./providers/remote/ ./memory/remote/
