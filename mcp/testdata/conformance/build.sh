#!/usr/bin/env bash
# Rebuilds conformance.wasm from conformance.c (clang + lld + wasi-libc; see
# .ci/install.d/host.sh) and records the source's hash in
# conformance.wasm.src, which the tests check so that a source edited
# without a rebuild fails loudly. The .wasm is committed: tests need no
# toolchain.
set -euo pipefail
cd "$(dirname "$0")"
${CC:-clang} --target=wasm32-wasi -O2 -Wl,--strip-all -o conformance.wasm conformance.c
sha256sum conformance.c | cut -d' ' -f1 >conformance.wasm.src
