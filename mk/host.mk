# host: the test modules of testdata/wasm and the host's Extism kernel
# (host/internal/kernel/src/kernel.c -> host/internal/kernel/kernel.wasm,
# embedded in package kernel): sources and committed .wasm files. build.sh
# rebuilds a module only when the hash of its sources changed, so a fresh
# checkout needs no WebAssembly toolchain; `make wasm-testdata-all`
# rebuilds everything.

.PHONY: wasm-testdata wasm-testdata-all

wasm-testdata:
	@bash testdata/wasm/build.sh

wasm-testdata-all:
	bash testdata/wasm/build.sh -f

test: wasm-testdata
