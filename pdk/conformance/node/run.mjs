// Runs one module in the official Extism JavaScript host and prints what it
// returns, so ../extismjs_test.go can compare it with what the autoagent
// host returns.
//
//   node run.mjs MODULE.wasm CASES.jsonl
//
// CASES.jsonl holds one JSON object per line: {"fn": "describe"|"call",
// "input": base64}. The script prints one line per case: the base64 of the
// output, or "error: MESSAGE" when the call failed.
import { readFileSync } from "node:fs";
import createPlugin from "@extism/extism";

const [wasmPath, casesPath] = process.argv.slice(2);
const plugin = await createPlugin(
  { wasm: [{ data: readFileSync(wasmPath) }] },
  { useWasi: true, runInWorker: false },
);
for (const line of readFileSync(casesPath, "utf8").split("\n")) {
  if (line.trim() === "") continue;
  const { fn, input } = JSON.parse(line);
  try {
    // A copy: the host reads the whole ArrayBuffer behind a view, and a small
    // Buffer is a view into a shared pool.
    const out = await plugin.call(fn, Uint8Array.from(Buffer.from(input, "base64")));
    console.log(Buffer.from(out ? out.bytes() : new Uint8Array(0)).toString("base64"));
  } catch (err) {
    console.log("error: " + String(err && err.message ? err.message : err).replace(/\n/g, " "));
  }
}
await plugin.close();
