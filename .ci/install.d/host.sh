#!/usr/bin/env bash
# host: the toolchain that rebuilds testdata/wasm and host/kernel.wasm (clang,
# lld, wasi-libc, the wasm32 compiler runtime). Only needed when a module's
# sources changed without a rebuild; the committed .wasm files let `go test`
# and `go build` run without it.
set -euo pipefail
cd "$(dirname "$0")/../.."
if bash testdata/wasm/build.sh --check 2>/dev/null; then
	exit 0 # every module is up to date: nothing to build
fi
if command -v clang >/dev/null && command -v wasm-ld >/dev/null && [ -d /usr/include/wasm32-wasi ]; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
rt=$(apt-cache search --names-only '^libclang-rt-[0-9]+-dev-wasm32$' | awk '{print $1}' | sort -V | tail -1)
apt-get install -y -qq clang lld wasi-libc ${rt:+"$rt"} >/dev/null
