# python: code mode's Python engine (codemode/pyprogram), CPython 3.11
# built from Debian's own source for wasm32-wasi and linked with the C
# runner into .cache/python/pyengine.wasm (~7 MB, not committed).
# `make python-engine` builds it when its key (the source version and the
# hashes of the recipe and the runner) changed: about 10 minutes on 2 cores
# the first time (CPython), seconds when only the runner changed, and a
# moment when nothing did. See codemode/pyprogram/build/build.sh.

PY_ENGINE_BUILD := codemode/pyprogram/build/build.sh
# What make runs (tests, examples) uses the checkout's engine: the library
# and the command take it only from this variable or the user cache.
export AUTOAGENT_PY_ENGINE ?= $(CURDIR)/.cache/python/pyengine.wasm

.PHONY: python-engine test-pyprogram bench-pyprogram

python-engine:
	@bash $(PY_ENGINE_BUILD)

test-pyprogram: python-engine
	$(GO) test -race -count=1 ./codemode/pyprogram/

bench-pyprogram: python-engine
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./codemode/pyprogram/

test: python-engine
bench: python-engine
demo: python-engine
