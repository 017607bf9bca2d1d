#!/usr/bin/env bash
# oras: the ORAS CLI, the registry client on the other side of the OCI
# distribution tests (oci package): a module pushed with it pulls with
# `autoagent tools pull`, and one pushed by `autoagent tools push` pulls
# with it. Built from the Go module proxy at a pinned version into
# .cache/bin (git-ignored), which the next run reuses.
set -euo pipefail
cd "$(dirname "$0")/../.."
. .ci/lib/goinstall.sh
goinstall oras v1.3.6 oras.land/oras/cmd/oras "a minute or two" version
