#!/usr/bin/env bash
# pdk: the toolchains that build the PDK conformance modules and plugins/
# (C: clang, lld, wasi-libc, the wasm32 compiler runtime; Rust: Debian's
# rustc with the wasm32-wasi standard library), and the npm packages of
# pdk/assemblyscript, pdk/zig and pdk/conformance/node (the AssemblyScript
# and Zig compilers, the Extism JavaScript host). Idempotent: it installs
# only what is missing and reinstalls npm packages only when a lock file
# changed.
set -euo pipefail
cd "$(dirname "$0")/../.."

# C: clang, lld, wasi-libc and the compiler runtime of the installed clang.
bash .ci/lib/wasm-toolchain.sh

missing=()
[ -x /usr/bin/rustc ] || missing+=(rustc)
[ -d /usr/lib/rustlib/wasm32-wasi ] || missing+=(libstd-rust-dev-wasm32)
command -v node >/dev/null && command -v npm >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]})); then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	echo "pdk: installing ${missing[*]}"
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

for d in pdk/assemblyscript pdk/zig pdk/conformance/node; do
	stamp="$d/node_modules/.package-lock.json"
	if [ -f "$stamp" ] && [ "$stamp" -nt "$d/package-lock.json" ]; then
		continue
	fi
	echo "pdk: npm ci in $d"
	(cd "$d" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
done
