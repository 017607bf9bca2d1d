#!/usr/bin/env bash
# make demo: an offline, SCRIPTED run through the autoagent CLI.
#
# A scripted model (no network, no API key) asks for sandboxed WebAssembly
# tools from plugins/: it lists and reads a data directory the operator
# granted, tries to read /etc/passwd (refused by the sandbox: outside the
# grant), computes with calc, and streams its answer. Before that, the demo
# walks the approval path: a dropped-in module is pending until approved.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${AUTOAGENT:-bin/autoagent}
work=$(mktemp -d "${TMPDIR:-/tmp}/autoagent-demo.XXXXXX")
serve_pid=
cleanup() {
	if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/plugins" "$work/data"
cp plugins/read_file.wasm plugins/text_tools.wasm plugins/http_get.wasm "$work/plugins/"
printf 'Q3 sales: 1200 units at 35 EUR.\nQ4 sales: 1450 units at 35 EUR.\n' > "$work/data/sales.txt"
# Keep kv stores inside the demo (compiled modules use the user cache, which
# `make synth-engine` warmed), and the trust store too: the manifests the
# demo writes are trusted in a store of its own, never the user's.
export XDG_DATA_HOME="$work/share"
export AUTOAGENT_TRUST="$work/trust.json"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "THIS IS A SCRIPTED DEMO: the model's turns come from examples/demo/script.jsonl"
step "Three modules dropped into plugins/: none runs until a person approves it"
"$bin" tools list --plugins "$work/plugins"

step "Approve read_file with read access to the demo's data directory only"
"$bin" tools approve "$work/plugins/read_file.wasm" --grant "fs.read:$work/data" --plugins "$work/plugins" --by demo --note "demo data only" --yes
step "Approve text_tools (json_query, regex, calc, csv_stats) with no capabilities at all"
"$bin" tools approve "$work/plugins/text_tools.wasm" --plugins "$work/plugins" --by demo --yes
"$bin" tools list --plugins "$work/plugins"

step "A manifest someone else wrote (a checkout's) counts only once you trust its exact content"
mkdir -p "$work/checkout/plugins"
cp plugins/read_file.wasm "$work/checkout/plugins/"
AUTOAGENT_TRUST="$work/teammate-trust.json" "$bin" tools approve "$work/checkout/plugins/read_file.wasm" \
	--grant "fs.read:$work/data" --by teammate --note "approved on another machine" --yes >/dev/null
"$bin" tools list --plugins "$work/checkout/plugins"
"$bin" tools trust --plugins "$work/checkout/plugins" --yes
"$bin" tools list --plugins "$work/checkout/plugins"

step "Run the agent (streamed; tool calls on stderr)"
sed "s|@DATA@|$work/data|g" examples/demo/script.jsonl > "$work/script.jsonl"
"$bin" run --provider scripted --script "$work/script.jsonl" --plugins "$work/plugins" \
	--stream --trace "$work/trace.jsonl" "How did Q4 sales compare with Q3?"

step "Trace summary"
"$bin" trace summarize "$work/trace.jsonl"

step "One changed byte voids the approval"
printf '\0' >> "$work/plugins/text_tools.wasm"
"$bin" tools verify --plugins "$work/plugins" || echo "(verify exited $?: the tampered module is no longer approved)"

step "A model writes a tool from examples (scripted writer; JavaScript in the sandbox)"
echo "Its first attempt fits the 3 examples it was shown but not the 2 it never saw:"
"$bin" synth --examples examples/demo/slugs.jsonl --goal "Turn a title into a URL slug" \
	--provider scripted --script examples/demo/writer.jsonl --seed 3 --staging "$work/staging"

step "A conversation kept in a session store, continued by a second process"
echo "My order number is 4417." | "$bin" chat --provider scripted --script examples/demo/session.jsonl \
	--plugins "$work/plugins" --session support --sessions "$work/sessions.db"
echo "(that process has exited; a new one continues the conversation)"
echo "What was my order number?" | "$bin" chat --provider scripted --script examples/demo/session.jsonl \
	--plugins "$work/plugins" --session support --sessions "$work/sessions.db"
"$bin" sessions show support --sessions "$work/sessions.db"

step "Code mode through the gate: a sandboxed tool calls a host tool, and the run's policy decides"
cp plugins/text_tools.wasm "$work/plugins/" # the untampered bytes: approved again
cp testdata/wasm/hostcall.wasm "$work/plugins/"
"$bin" tools approve "$work/plugins/hostcall.wasm" --grant tools:calc --force --plugins "$work/plugins" --by demo \
	--note "may call calc (the run's policy still decides)" --yes
printf '{"rules":[{"tool":"calc","action":"deny","reason":"calc is off limits to sandboxed code in this demo"}]}\n' > "$work/policy.json"
"$bin" run --provider scripted --script examples/demo/codemode.jsonl --plugins "$work/plugins" \
	--policy "$work/policy.json" --stream "Use hostcall to reach calc."

step "A typed answer: the answer must match a JSON Schema; two that do not go back with the validator's message"
"$bin" run --provider scripted --script examples/demo/structured.jsonl --output-schema examples/demo/person.schema.json --plugins "$work/plugins" \
	--stream "Who is Alice?"

step "The operator console: autoagent serve (for ${DEMO_SERVE_SECONDS:=5} seconds; DEMO_SERVE_SECONDS=600 make demo keeps it up)"
sed "s|@DATA@|$work/data|g" examples/demo/serve.jsonl > "$work/serve.jsonl"
printf '{"default":"allow","rules":[{"tool":"calc","action":"approve","reason":"the demo asks a person before calc runs"}]}\n' > "$work/serve-policy.json"
cp plugins/http_get.wasm "$work/plugins/" # dropped in again: pending, for the tools page
# Port 0: the system picks a free one; serve prints the address it listens on.
"$bin" serve --addr 127.0.0.1:0 --provider scripted --script "$work/serve.jsonl" --plugins "$work/plugins" \
	--policy "$work/serve-policy.json" --runs "$work/runs" 2> "$work/serve.log" &
serve_pid=$!
url=
for _ in $(seq 100); do
	url=$(sed -n 's|.*listening on \(http://[^ ]*\).*|\1|p' "$work/serve.log")
	[ -n "$url" ] && break
	kill -0 "$serve_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -z "$url" ]; then
	echo "autoagent serve did not start:"
	cat "$work/serve.log"
	exit 1
fi
if command -v curl >/dev/null; then
	id=$(curl -fsS -H 'Content-Type: application/json' -d '{"prompt":"How did Q4 sales compare with Q3?","background":true}' "$url/v1/runs" |
		sed -n 's|.*"id": *"\([^"]*\)".*|\1|p')
	status=
	for _ in $(seq 100); do
		status=$(curl -fsS "$url/v1/runs/$id" | sed -n 's|^{"id":"[^"]*","status":"\([a-z_]*\)".*|\1|p')
		[ "$status" = running ] || break
		sleep 0.1
	done
	echo "Started run $id over the API: it read the sales notes, and is $status (calc waits for a person)."
else
	echo "(no curl: start a run from the console's Runs page)"
fi
cat <<EOT

  Console:  $url/            (loopback: no token needed; elsewhere --token-env gives tokens with roles)
  API:      $url/openapi.json

  Try, in a browser:
    Approvals  the run above waits on its calc call: read why (the policy's rule), approve it with a reason,
               then open the run: its timeline shows the model's steps, the tool calls and the decision.
    Tools      http_get.wasm is pending: review its sha256, requested capabilities and schemas, approve
               it with what it requests, or revoke an approved module; Verify checks every approved file.
    Runs       start a run: its timeline streams as it goes.
EOT
sleep "$DEMO_SERVE_SECONDS"
kill -TERM "$serve_pid"
wait "$serve_pid" || true
serve_pid=
echo "autoagent serve stopped (the runs it kept were in the demo's temporary directory)."
