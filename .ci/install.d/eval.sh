#!/usr/bin/env bash
# eval: headless Chromium, in which the tests of autoagent eval --html render
# the report page and read its DOM (eval/htmltest). Idempotent: installs only
# when no chromium is on PATH.
set -euo pipefail
if command -v chromium >/dev/null; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
echo "eval: installing chromium (headless, for the HTML report's tests)"
apt-get install -y -qq --no-install-recommends chromium >/dev/null
