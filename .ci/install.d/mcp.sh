#!/usr/bin/env bash
# mcp: what the MCP interoperability tests run against, installed into
# mcp/testdata/node/node_modules (git-ignored) from the committed
# package-lock.json: the reference server @modelcontextprotocol/server-everything
# and the conformance suite @modelcontextprotocol/conformance (which wants
# Node 20). Quick when already installed: the lock file's hash is stamped.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=mcp/testdata/node
stamp=$dir/node_modules/.autoagent-lock.sha256

node_major() { node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq nodejs npm >/dev/null
fi
if [ "$(node_major)" -lt 20 ]; then
	echo "mcp.sh: warning: node $(node --version) is older than 20, which the MCP conformance suite expects" >&2
fi

want=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
	[ -f "$dir/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ] &&
	[ -f "$dir/node_modules/@modelcontextprotocol/conformance/dist/index.js" ]; then
	exit 0
fi
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
echo "$want" >"$stamp"
