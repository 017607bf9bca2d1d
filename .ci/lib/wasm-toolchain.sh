#!/usr/bin/env bash
# Installs the C-to-WebAssembly toolchain when it is missing or incomplete:
# clang, lld and wasi-libc, and the wasm32 compiler runtime
# (libclang_rt.builtins-wasm32.a) of the *installed* clang's LLVM version.
# Debian ships several libclang-rt-N-dev-wasm32 packages; only the one whose
# N is clang's major version puts the runtime where clang's linker looks
# (`clang -print-resource-dir`/lib/wasi), so the newest one is no good.
# With --wabt it also installs wabt (wat2wasm), for modules written in WAT.
#
#   bash .ci/lib/wasm-toolchain.sh [--wabt]
set -euo pipefail

want_wabt=false
[ "${1:-}" = --wabt ] && want_wabt=true

apt_install() {
	export DEBIAN_FRONTEND=noninteractive
	if [ -z "${APT_UPDATED:-}" ]; then
		apt-get update -qq
		APT_UPDATED=1
	fi
	echo "wasm-toolchain: installing $*" >&2
	apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

missing=()
command -v clang >/dev/null || missing+=(clang)
command -v wasm-ld >/dev/null || missing+=(lld)
[ -d /usr/include/wasm32-wasi ] || missing+=(wasi-libc)
if $want_wabt && ! command -v wat2wasm >/dev/null; then missing+=(wabt); fi
if ((${#missing[@]})); then apt_install "${missing[@]}"; fi

# The runtime must match the clang that will run, whichever LLVM it is.
resource=$(clang -print-resource-dir)
if [ ! -f "$resource/lib/wasi/libclang_rt.builtins-wasm32.a" ]; then
	major=$(clang -dumpversion | cut -d. -f1)
	pkg=libclang-rt-$major-dev-wasm32
	if ! apt-cache show "$pkg" >/dev/null 2>&1; then
		[ -n "${APT_UPDATED:-}" ] || { apt-get update -qq; APT_UPDATED=1; }
	fi
	if ! apt-cache show "$pkg" >/dev/null 2>&1; then
		echo "wasm-toolchain: clang $major needs $pkg, which apt does not offer; install clang from an LLVM that has it" >&2
		exit 1
	fi
	apt_install "$pkg"
	if [ ! -f "$resource/lib/wasi/libclang_rt.builtins-wasm32.a" ]; then
		echo "wasm-toolchain: $pkg did not provide $resource/lib/wasi/libclang_rt.builtins-wasm32.a" >&2
		exit 1
	fi
fi
