#!/usr/bin/env bash
# make eval-example: a scripted evaluation through the autoagent CLI, offline.
#
# Four cases, each run four times against the scripted provider with the
# sandboxed text_tools module (calc, json_query) approved with no
# capabilities. Two cases fail on some runs by design (their "scripts"
# differ per run), so pass^4 is visibly below pass@1. The HTML report is
# written to ${EVAL_REPORT:-eval-report.html}.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${AUTOAGENT:-bin/autoagent}
work=$(mktemp -d "${TMPDIR:-/tmp}/autoagent-eval.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/plugins"
cp plugins/text_tools.wasm "$work/plugins/"
export XDG_DATA_HOME="$work/share"
export AUTOAGENT_TRUST="$work/trust.json" # the manifest it writes is trusted here, not in the user's store
"$bin" tools approve "$work/plugins/text_tools.wasm" --plugins "$work/plugins" --by eval-example --yes >/dev/null
report=${EVAL_REPORT:-eval-report.html}
"$bin" eval examples/eval/cases.jsonl --provider scripted --plugins "$work/plugins" \
	--k 4 --concurrency 2 --tariff 3,15 --cost-unit USD --html "$report"
echo
echo "HTML report: $report"
