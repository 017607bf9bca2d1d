#!/usr/bin/env bash
# host: the toolchain that rebuilds testdata/wasm and host/internal/kernel/kernel.wasm (clang,
# lld, wasi-libc, the wasm32 compiler runtime of that clang, wabt for the
# modules written in WAT). Only needed when a module's
# sources changed without a rebuild; the committed .wasm files let `go test`
# and `go build` run without it.
set -euo pipefail
cd "$(dirname "$0")/../.."
if bash testdata/wasm/build.sh --check 2>/dev/null; then
	exit 0 # every module is up to date: nothing to build
fi
bash .ci/lib/wasm-toolchain.sh --wabt
