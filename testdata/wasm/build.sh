#!/usr/bin/env bash
# Rebuilds the test modules of testdata/wasm whose sources changed, and the
# host's Extism kernel (host/internal/kernel/kernel.wasm, embedded in package kernel).
#
# Each module's sources are hashed (path and content) into SOURCES, and so
# is its recipe (see recipe); a module is rebuilt only when either differs
# from the one recorded, so a fresh checkout (whatever its file times) never
# needs a toolchain, and `go test` (TestCorpusUpToDate) fails when a source
# changed without a rebuild.
#
# Toolchains: clang + lld + wasi-libc for C (Debian: clang lld wasi-libc and
# the libclang-rt-N-dev-wasm32 of clang's version N), wabt's wat2wasm for
# the modules written in WAT, Go for the Go guest.
#
#   bash testdata/wasm/build.sh          rebuild what changed
#   bash testdata/wasm/build.sh -f       rebuild everything
#   bash testdata/wasm/build.sh --check  list stale modules; exit 1 if any
set -euo pipefail
cd "$(dirname "$0")"
force=${1:-}
GO=${GO:-go}
CC=${CC:-clang}
RUSTC=${RUSTC:-/usr/bin/rustc}
export CC GO RUSTC
FREESTANDING="--target=wasm32 -nostdlib -O2 -Wl,--no-entry -Wl,--strip-all"

# module <name> <sources...> -- <build command...>
# The build command writes OUT (a temporary file) from the sources.
declare -a stale=()
hash_sources() {
	for f in "$@"; do printf '%s\0' "$f"; cat "$f"; printf '\0'; done | sha256sum | cut -d' ' -f1
}

# recipe is what a module's build depends on besides its sources: its build
# command and the helpers and flags that command may use. A module's hash
# covers it, not the whole of this script, so adding a module leaves the
# others up to date.
recipe() { declare -f wat watgen c_freestanding rust_wasi; printf '%s\n' "$FREESTANDING" "$@"; }

recorded() { awk -v n="$1" '$1 == n { print $2, $3 }' SOURCES 2>/dev/null || true; }

record() {
	local name=$1 h=$2; shift 2
	local tmp
	tmp=$(mktemp)
	{ grep -v "^$name " SOURCES 2>/dev/null || true; echo "$name $h $*"; } | sort >"$tmp"
	mv "$tmp" SOURCES
}

module() {
	local name=$1; shift
	local -a srcs=()
	while [ "$1" != "--" ]; do srcs+=("$1"); shift; done
	shift
	local h
	h="$(hash_sources "${srcs[@]}") recipe:$(recipe "$@" | sha256sum | cut -d' ' -f1)"
	if [ "$force" != "-f" ] && [ -f "$name" ] && [ "$(recorded "$name")" = "$h" ]; then
		return 0
	fi
	if [ "$force" = "--check" ]; then
		echo "wasm-testdata: $name is stale" >&2
		stale+=("$name")
		return 0
	fi
	echo "wasm-testdata: building $name" >&2
	OUT="$name.tmp"
	export OUT
	"$@"
	mv "$OUT" "$name"
	record "$name" "$h" "${srcs[@]}"
}

# wat SRC [wat2wasm flags...]: a module written in WAT, with the shared
# describe export spliced in at its ";;@describe" line.
wat() {
	local src=$1; shift
	sed -e '/;;@describe/{r src/wat/describe.inc' -e 'd}' "$src" >"$OUT.wat"
	# wat2wasm recurses once per nested block: deeply nested modules need
	# more than the default 8 MB stack.
	(ulimit -s unlimited 2>/dev/null || ulimit -s 1048576; wat2wasm "$@" "$OUT.wat" -o "$OUT")
	rm -f "$OUT.wat"
}

# watgen GEN [wat2wasm flags...]: a WAT module a script writes.
watgen() {
	local gen=$1; shift
	sh "$gen" >"$OUT.gen.wat"
	wat "$OUT.gen.wat" "$@"
	rm -f "$OUT.gen.wat"
}

rust_wasi() { # rust_wasi SRC: Rust with std, by Debian's rustc
	$RUSTC --target wasm32-wasi --crate-type cdylib -C opt-level=s -C strip=symbols -o "$OUT" "$1"
}

c_freestanding() { # c_freestanding SRC [extra flags...]
	local src=$1; shift
	$CC $FREESTANDING "$@" -o "$OUT" "$src"
}

# The kernel: no stack to speak of, one page of memory to start.
module ../../host/internal/kernel/kernel.wasm ../../host/internal/kernel/src/kernel.c -- c_freestanding ../../host/internal/kernel/src/kernel.c -Wall -Wextra -Werror -Wl,--stack-first -Wl,-z,stack-size=4096 -Wl,--initial-memory=65536

H="src/guest.h"
HH="src/guest.h src/hostile.h"
module echo.wasm $H src/echo.c -- c_freestanding src/echo.c
module compute.wasm $H src/compute.c -- c_freestanding src/compute.c
module fetch.wasm $H src/fetch.c -- c_freestanding src/fetch.c
module kv.wasm $H src/kv.c -- c_freestanding src/kv.c
module hostcall.wasm $H src/hostcall.c -- c_freestanding src/hostcall.c
module state.wasm $H src/state.c -- c_freestanding src/state.c
module hostfn.wasm $H src/hostfn.c -- c_freestanding src/hostfn.c
module hostfndescribe.wasm $H src/hostfn.c -- c_freestanding src/hostfn.c -DDESCRIBE_CALLS
module plain.wasm $H src/plain.c -- c_freestanding src/plain.c
module loop.wasm $HH src/loop.c -- c_freestanding src/loop.c
module membomb.wasm $HH src/membomb.c -- c_freestanding src/membomb.c
module schemacost.wasm $H src/schemacost.c -- c_freestanding src/schemacost.c
module hugeout.wasm $HH src/hugeout.c -- c_freestanding src/hugeout.c
module recursion.wasm $HH src/recursion.c -- c_freestanding src/recursion.c
module trap.wasm $HH src/trap.c -- c_freestanding src/trap.c
module kernelfail.wasm $H src/kernelfail.c -- c_freestanding src/kernelfail.c
module snapsecret.wasm $H src/snapsecret.c src/snapsecret.s -- c_freestanding src/snapsecret.c src/snapsecret.s -mreference-types -Wl,--export=__wasm_call_ctors
module snapseeds.wasm $H src/snapsecret.c src/snapsecret.s -- c_freestanding src/snapsecret.c src/snapsecret.s -mreference-types -Wl,--export=__wasm_call_ctors -DSHARED_SEEDS
module snapreset.wasm $H src/snapsecret.c src/snapreset.s -- c_freestanding src/snapsecret.c src/snapreset.s -DNO_TABLE -Wl,--export=__wasm_call_ctors
# Imports asked at call time (issue 44 item 4): a hyper-mcp v2 plugin that
# imports http_request it rarely calls, and an initialiser that calls it.
module lazytime.wasm $H src/lazytime.c -- c_freestanding src/lazytime.c
module lazyinit.wasm $H src/lazyinit.c -- c_freestanding src/lazyinit.c -Wl,--export=__wasm_call_ctors
module unknownimport.wasm $HH src/unknownimport.c -- c_freestanding src/unknownimport.c
module bigmem.wasm $HH src/bigmem.c -- c_freestanding src/bigmem.c -Wl,--initial-memory=134217728
module noabi.wasm $H src/noabi.c -- c_freestanding src/noabi.c
module nodescribe.wasm $H src/nodescribe.c -- c_freestanding src/nodescribe.c
module baddescribe.wasm $H src/baddescribe.c -- c_freestanding src/baddescribe.c
module describeloop.wasm $H src/describeloop.c -- c_freestanding src/describeloop.c
module wasicmd.wasm src/wasicmd.c -- bash -c '$CC --target=wasm32-wasi --sysroot=/usr -O2 -Wl,--strip-all -o "$OUT" src/wasicmd.c'
module fsattack.wasm src/fsattack.c -- bash -c '$CC --target=wasm32-wasi --sysroot=/usr -O2 -Wl,--strip-all -o "$OUT" src/fsattack.c'
module fsgovern.wasm src/fsgovern/main.go -- bash -c 'cd ../.. && GOOS=wasip1 GOARCH=wasm $GO build -trimpath -ldflags=-s -o "testdata/wasm/$OUT" ./testdata/wasm/src/fsgovern'
module fsjournal.wasm src/fsjournal/main.go -- bash -c 'cd ../.. && GOOS=wasip1 GOARCH=wasm $GO build -trimpath -ldflags=-s -o "testdata/wasm/$OUT" ./testdata/wasm/src/fsjournal'
module goecho.wasm src/goecho/main.go -- bash -c 'cd ../.. && GOOS=wasip1 GOARCH=wasm $GO build -buildmode=c-shared -trimpath -ldflags=-s -o "testdata/wasm/$OUT" ./testdata/wasm/src/goecho'
# hyper-mcp plugins of the v1 and v2 interfaces, in standard Go with
# Extism's official Go PDK (its own module, fetched when they are built).
HG="src/hypermcp/go/go.mod src/hypermcp/go/go.sum"
module hypermcpv1go.wasm $HG src/hypermcp/go/v1/main.go -- bash -c 'cd src/hypermcp/go && GOOS=wasip1 GOARCH=wasm $GO build -buildmode=c-shared -trimpath -ldflags=-s -o "../../../$OUT" ./v1'
module hypermcpv2go.wasm $HG src/hypermcp/go/v2/main.go -- bash -c 'cd src/hypermcp/go && GOOS=wasip1 GOARCH=wasm $GO build -buildmode=c-shared -trimpath -ldflags=-s -o "../../../$OUT" ./v2'
# The same in Rust with std, built by Debian's rustc (no crates).
module hypermcpv1rust.wasm ../../pdk/rust/autoagent.rs src/hypermcp/rust/v1.rs -- rust_wasi src/hypermcp/rust/v1.rs
module hypermcpv2rust.wasm src/hypermcp/rust/v2.rs -- rust_wasi src/hypermcp/rust/v2.rs
# The shapes of function the stack budget charges in different blocks.
module scopes.wasm src/wat/describe.inc src/wat/scopes.wat -- wat src/wat/scopes.wat
# The hostile corpus of the sandbox's defences (see HOSTILE.md): each
# module attacks one class, its expected outcome in its source.
W="src/wat/describe.inc"
module fuelreach.wasm $W src/wat/fuelreach.wat -- wat src/wat/fuelreach.wat --no-check
module scratchreach.wasm $W src/wat/scratchreach.wat -- wat src/wat/scratchreach.wat --no-check
module tablegrow.wasm $W src/wat/tablegrow.wat -- wat src/wat/tablegrow.wat
module tabledeclared.wasm $W src/wat/tabledeclared.wat -- wat src/wat/tabledeclared.wat
module errorbomb.wasm $W src/wat/errorbomb.wat -- wat src/wat/errorbomb.wat
module forgeheaders.wasm $W src/wat/forgeheaders.wat -- wat src/wat/forgeheaders.wat
module kvflood.wasm $W src/wat/kvflood.wat -- wat src/wat/kvflood.wat
module kvchurn.wasm $W src/wat/kvchurn.wat -- wat src/wat/kvchurn.wat
module reentry.wasm $W src/wat/reentry.wat -- wat src/wat/reentry.wat
module bulkfill.wasm $W src/wat/gen/bulkfill.sh -- watgen src/wat/gen/bulkfill.sh
module nestbomb.wasm $W src/wat/gen/nestbomb.sh -- watgen src/wat/gen/nestbomb.sh
module branchbomb.wasm $W src/wat/gen/branchbomb.sh -- watgen src/wat/gen/branchbomb.sh
module schemabomb.wasm $W src/wat/gen/schemabomb.sh -- watgen src/wat/gen/schemabomb.sh
module patternbomb.wasm $W src/wat/gen/patternbomb.sh -- watgen src/wat/gen/patternbomb.sh
module manytools.wasm $W src/wat/gen/manytools.sh -- watgen src/wat/gen/manytools.sh
module randomloop.wasm $W src/wat/randomloop.wat -- wat src/wat/randomloop.wat
module writev.wasm $W src/wat/writev.wat -- wat src/wat/writev.wat
module preadloop.wasm $W src/wat/preadloop.wat -- wat src/wat/preadloop.wat
module fdhog.wasm $W src/wat/fdhog.wat -- wat src/wat/fdhog.wat
module readdirbomb.wasm $W src/wat/readdirbomb.wat -- wat src/wat/readdirbomb.wat
module diskfill.wasm $W src/wat/diskfill.wat -- wat src/wat/diskfill.wat
module varbomb.wasm $W src/wat/varbomb.wat -- wat src/wat/varbomb.wat
module sparse.wasm $W src/wat/sparse.wat -- wat src/wat/sparse.wat
module spillbomb.wasm $W src/wat/gen/spillbomb.sh -- watgen src/wat/gen/spillbomb.sh
module loopbody.wasm $W src/wat/gen/loopbody.sh -- watgen src/wat/gen/loopbody.sh
module chain.wasm $W src/wat/gen/chain.sh -- watgen src/wat/gen/chain.sh
module inits.wasm $W src/wat/inits.wat -- wat src/wat/inits.wat
module notifyflood.wasm $W src/wat/notifyflood.wat -- wat src/wat/notifyflood.wat
module relist.wasm src/wat/relist.wat -- wat src/wat/relist.wat
module idlefds.wasm $W src/wat/idlefds.wat -- wat src/wat/idlefds.wat
module startspin.wasm src/wat/startspin.wat -- wat src/wat/startspin.wat
module reffunc.wasm $W src/wat/reffunc.wat -- wat src/wat/reffunc.wat
module looprecursion.wasm $W src/wat/looprecursion.wat -- wat src/wat/looprecursion.wat
module scoperecursion.wasm $W src/wat/scoperecursion.wat -- wat src/wat/scoperecursion.wat
# Imports the module hands the host as its own functions (issue 38).
module reexportexit.wasm $W src/wat/reexportexit.wat -- wat src/wat/reexportexit.wat
module reexportdescribe.wasm src/wat/reexportdescribe.wat -- wat src/wat/reexportdescribe.wat
module reexportstart.wasm src/wat/reexportstart.wat -- wat src/wat/reexportstart.wat
module reexportkernel.wasm $W src/wat/reexportkernel.wat -- wat src/wat/reexportkernel.wat
module startimport.wasm $W src/wat/startimport.wat -- wat src/wat/startimport.wat
module tableexit.wasm $W src/wat/tableexit.wat -- wat src/wat/tableexit.wat
# An initialiser that uses its grants (issue 38).
module initsend.wasm $W src/wat/initsend.wat -- wat src/wat/initsend.wat
# A stateful module that keeps every call's input (issue 38).
module keepinput.wasm $W src/wat/keepinput.wat -- wat src/wat/keepinput.wat
# Compile and instantiation bombs shaped by numbers, written by a Go
# program (src/gen).
G="src/gen/main.go src/gen/module.go src/gen/shapes.go"
for bomb in aritybomb brtablebomb passbomb loopbomb loopnest diamonds entrybomb callbomb elemsegs datasegs overlapdata; do
	module $bomb.wasm $G -- bash -c 'cd ../.. && $GO run ./testdata/wasm/src/gen '$bomb' >"testdata/wasm/$OUT"'
done
# Not a module at all: the magic number followed by garbage.
module malformed.wasm -- bash -c 'printf "\\0asm\\1\\0\\0\\0\\377\\377\\377\\377this is not webassembly" >"$OUT"'

if [ ${#stale[@]} -gt 0 ]; then exit 1; fi
