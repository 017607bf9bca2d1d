#!/usr/bin/env bash
# Builds code mode's Python engine: CPython 3.11 from Debian's own source
# for wasm32-wasi, linked with runner.c into an Extism-ABI reactor, into
# .cache/python/pyengine.wasm (`make python-engine` runs this).
#
#   bash codemode/pyprogram/build/build.sh [--check | --deps]
#
# Two stages, each cached under .cache/python by a key:
#   1. libpython (about 10 minutes on 2 cores, the first time): the source
#      package python3.11=$PY_DEB_VERSION fetched with `apt-get source`
#      through a private source list made from this machine's own apt
#      sources (the system's apt setup is not touched), configured for
#      wasm32-wasi with Debian's clang, lld and wasi-libc and Debian's own
#      python3.11 as the build python; only libpython and the builtin
#      modules are built. Key: the version + this script's hash.
#   2. the engine (seconds): the stdlib modules in frozen-modules.txt and
#      prelude.py frozen in (genfrozen.py), runner.c compiled and linked
#      with libpython, stripped. Key: stage 1's key + the runner sources'
#      hash.
# The engine is written to a temporary file and renamed into place, with
# its key in pyengine.key; a rebuild happens only when a key changes.
# --check exits 0 when the engine is up to date, 1 when not (no build).
# --deps installs what a build needs, when the engine is not up to date
# (.ci/install.d/python.sh: `make deps`).
#
# See RATIONALE.md, "Why are code-mode programs JavaScript or Python?".
set -euo pipefail

PY_DEB_VERSION=3.11.2-6+deb12u8 # the security update's u9 .dsc answered 404: pinned
PY_SRC_DIR=python3.11-3.11.2

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
cache=$root/.cache/python
out=$cache/pyengine.wasm

say() { echo "python-engine: $*" >&2; }

hash_of() { cat "$@" | sha256sum | cut -c1-16; }
runner_files=("$here/runner.c" "$here/prelude.py" "$here/genfrozen.py" "$here/frozen-modules.txt")
libkey="$PY_DEB_VERSION-$(hash_of "$here/libpython.sh")"
key="$libkey-$(hash_of "$here/build.sh" "${runner_files[@]}")"

if [ -f "$out" ] && [ "$(cat "$cache/pyengine.key" 2>/dev/null)" = "$key" ]; then
	case "${1:-}" in --check | --deps) ;; *) say "up to date ($out, $key)" ;; esac
	exit 0
fi
[ "${1:-}" = --check ] && exit 1

# --- the build's needs (as .ci/lib/wasm-toolchain.sh installs them) -------
bash "$root/.ci/lib/wasm-toolchain.sh"
missing=()
command -v llvm-ar >/dev/null || missing+=(llvm)
command -v llvm-ranlib >/dev/null || missing+=(llvm)
# The build python is Debian's own 3.11.2, the engine's version (not one
# a version manager puts first on PATH).
[ -x /usr/bin/python3.11 ] || missing+=(python3.11)
command -v dpkg-source >/dev/null || missing+=(dpkg-dev)
command -v make >/dev/null || missing+=(make)
command -v xz >/dev/null || missing+=(xz-utils)
command -v cc >/dev/null || missing+=(gcc) # config.guess asks a native compiler
if ((${#missing[@]})); then
	say "installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
[ "${1:-}" = --deps ] && exit 0

start=$(date +%s)
mkdir -p "$cache"

lib=$cache/lib-$libkey
# shellcheck source=libpython.sh
. "$here/libpython.sh"

# --- 2. the engine: frozen stdlib + prelude, runner, link ----------------
say "[4/4] linking the engine (runner.c, prelude.py, frozen stdlib)"
src=$lib/src
b=$src/builddir/wasi
work=$cache/work
rm -rf "$work"
mkdir -p "$work"
# The build python is Debian's 3.11.2, the engine's own version: its
# marshal format is the engine's.
/usr/bin/python3.11 "$here/genfrozen.py" "$src/Lib" "$work/frozen.c" "$here/prelude.py" $(grep -v '^#' "$here/frozen-modules.txt") >&2
cc=(clang --target=wasm32-wasi --sysroot=/usr -nostdlibinc -idirafter /usr/include/wasm32-wasi)
cflags=(-O2 -Wall -Werror -I"$src/Include" -I"$b" -I"$src/Include/internal")
"${cc[@]}" "${cflags[@]}" -c "$here/runner.c" -o "$work/runner.o"
"${cc[@]}" -O2 -I"$src/Include" -I"$b" -c "$work/frozen.c" -o "$work/frozen.o"
# The stack first in memory, as CPython's own wasi build links it, so an
# overflow traps instead of writing over the heap.
clang --target=wasm32-wasi --sysroot=/usr -mexec-model=reactor -z stack-size=524288 -Wl,--stack-first -Wl,--initial-memory=10485760 \
	-Wl,--strip-all -o "$work/pyengine.wasm" "$work/runner.o" "$work/frozen.o" \
	"$b/libpython3.11.a" "$b/Modules/_decimal/libmpdec/libmpdec.a" \
	-lwasi-emulated-signal -lwasi-emulated-getpid -lwasi-emulated-process-clocks -lm
tmp=$out.$$.tmp
cp "$work/pyengine.wasm" "$tmp"
mv "$tmp" "$out"
echo "$key" >"$cache/pyengine.key.$$.tmp"
mv "$cache/pyengine.key.$$.tmp" "$cache/pyengine.key"
rm -rf "$work"
say "built $out ($(stat -c %s "$out") bytes, key $key) in $(($(date +%s) - start)) s"
