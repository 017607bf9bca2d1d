#!/usr/bin/env bash
# oras: the ORAS CLI, the registry client on the other side of the OCI
# distribution tests (oci package): a module pushed with it pulls with
# `autoagent tools pull`, and one pushed by `autoagent tools push` pulls
# with it. Built from the Go module proxy at a pinned version into
# .cache/bin (git-ignored), which the next run reuses.
set -euo pipefail
cd "$(dirname "$0")/../.."
version=v1.3.6
bin=.cache/bin/oras
stamp=.cache/bin/oras.version
if [ -x "$bin" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$version" ]; then
	exit 0
fi
mkdir -p .cache/bin
echo "oras: building the ORAS CLI $version from the Go module proxy (a minute or two on 2 cores; cached in .cache/bin)"
start=$(date +%s)
GOBIN="$PWD/.cache/bin" go install "oras.land/oras/cmd/oras@$version"
echo "$version" >"$stamp"
echo "oras: built in $(($(date +%s) - start))s: $("$bin" version | head -1)"
