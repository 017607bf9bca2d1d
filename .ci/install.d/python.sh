#!/usr/bin/env bash
# python: what building code mode's Python engine needs (clang, lld,
# wasi-libc, llvm, Debian's python3.11, dpkg-dev), installed only when the
# engine in .cache/python is missing or older than its sources; the build
# itself is `make python-engine` (see codemode/pyprogram/build/build.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
exec bash codemode/pyprogram/build/build.sh --deps
