#!/usr/bin/env bash
# A Go command built from the Go module proxy at a pinned version into
# .cache/bin (git-ignored), which the next run reuses: the install scripts of
# peers the tests talk to (the Temporal CLI, the ORAS CLI) source this file
# and call
#
#   goinstall NAME VERSION PACKAGE "HOW LONG IT TAKES" VERSION-ARGS...
#
# from the repository root. NAME is the binary's name, PACKAGE the Go package
# path without its @version; the stamp file .cache/bin/NAME.version says which
# version the binary is, so a changed pin rebuilds it.

goinstall() {
	local name=$1 version=$2 pkg=$3 takes=$4
	shift 4
	local bin=.cache/bin/$name stamp=.cache/bin/$name.version
	if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$version" ]; then
		return 0
	fi
	mkdir -p .cache/bin
	echo "$name: building $pkg $version from the Go module proxy ($takes on 2 cores; cached in .cache/bin)"
	local start
	start=$(date +%s)
	GOBIN="$PWD/.cache/bin" go install "$pkg@$version"
	echo "$version" >"$stamp"
	echo "$name: built in $(($(date +%s) - start))s: $("$bin" "$@" | head -1)"
}
