#!/usr/bin/env bash
# temporal: the Temporal CLI, whose dev server (`temporal server start-dev`)
# the durable package's integration tests run against. Built from the Go
# module proxy at a pinned version into .cache/bin (git-ignored), which the
# next run reuses: about 7 minutes on 2 cores the first time, nothing after.
set -euo pipefail
cd "$(dirname "$0")/../.."
. .ci/lib/goinstall.sh
goinstall temporal v1.5.1 github.com/temporalio/cli/cmd/temporal "about 7 minutes" --version
