// kv: the key-value conformance module of the AssemblyScript PDK
// (pdk/conformance/SPEC.md, "The kv module"): one tool per operation of the
// kv capability.
//
// Build: ../../../assemblyscript/node_modules/.bin/asc assembly/index.ts \
//            --config asconfig.json -o kv.wasm

import { Arg, Bytes, Call, describe as setDescribe, kv, utf8 } from "../../../../assemblyscript/assembly/autoagent";

const DESCRIBE =
  "{\"tools\":[{\"name\":\"kv_set\",\"description\":\"Stores a value under a key.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"namespace\":{\"type\":\"string\",\"description\":\"the kv namespace; empty or absent for the module's only one\"},\"key\":{\"type\":\"string\",\"description\":\"the key\"},\"value\":{\"type\":\"string\",\"description\":\"the value to store\"}},\"required\":[\"key\",\"value\"],\"additionalProperties\":false}}" +
  ",{\"name\":\"kv_get\",\"description\":\"Reads the value stored under a key.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"namespace\":{\"type\":\"string\",\"description\":\"the kv namespace; empty or absent for the module's only one\"},\"key\":{\"type\":\"string\",\"description\":\"the key\"}},\"required\":[\"key\"],\"additionalProperties\":false},\"outputSchema\":{\"type\":\"object\",\"properties\":{\"found\":{\"type\":\"boolean\",\"description\":\"whether the key holds a value\"},\"value\":{\"type\":\"string\",\"description\":\"the value, empty when not found\"}},\"required\":[\"found\",\"value\"],\"additionalProperties\":false}}" +
  ",{\"name\":\"kv_delete\",\"description\":\"Removes a key.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"namespace\":{\"type\":\"string\",\"description\":\"the kv namespace; empty or absent for the module's only one\"},\"key\":{\"type\":\"string\",\"description\":\"the key\"}},\"required\":[\"key\"],\"additionalProperties\":false}}" +
  ",{\"name\":\"kv_keys\",\"description\":\"Lists the keys that start with a prefix.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"namespace\":{\"type\":\"string\",\"description\":\"the kv namespace; empty or absent for the module's only one\"},\"prefix\":{\"type\":\"string\",\"description\":\"list only the keys starting with this; empty or absent for all\"}},\"additionalProperties\":false},\"outputSchema\":{\"type\":\"object\",\"properties\":{\"keys\":{\"type\":[\"null\",\"array\"],\"description\":\"the keys, in byte order\",\"items\":{\"type\":\"string\"}}},\"required\":[\"keys\"],\"additionalProperties\":false}}],\"capabilities\":[\"kv\"]}";

export function describe(): i32 {
  return setDescribe(DESCRIBE);
}

/** The string arguments a tool takes, decoded (null when absent). */
class Params {
  namespace: string = "";
  key: string | null = null;
  value: Uint8Array | null = null;
  prefix: string = "";
}

/** Reads the arguments: each must be one of the properties named in
 * allowed, and a string; the last of a repeated one counts. A problem is
 * written as the call's result (c.done). */
function params(c: Call, allowed: string[]): Params {
  const p = new Params();
  const args = c.args();
  for (let k = 0; k < args.length && !c.done; k++) {
    const a: Arg = args[k];
    const name = String.UTF8.decode(a.key.buffer);
    if (!allowed.includes(name)) {
      c.failUnknown(a);
      break;
    }
    if (c.type(a) != "string") {
      c.failType(a, "string");
      break;
    }
    const v = c.string(a);
    if (name == "namespace") p.namespace = String.UTF8.decode(v.buffer);
    else if (name == "key") p.key = String.UTF8.decode(v.buffer);
    else if (name == "value") p.value = v;
    else p.prefix = String.UTF8.decode(v.buffer);
  }
  return p;
}

function kvSet(c: Call): void {
  const p = params(c, ["namespace", "key", "value"]);
  if (c.done) return;
  const key = p.key;
  const value = p.value;
  if (key === null) return c.failMissing("key");
  if (value === null) return c.failMissing("value");
  kv(p.namespace).set(key, value);
  c.resultText(utf8("stored"));
}

function kvGet(c: Call): void {
  const p = params(c, ["namespace", "key"]);
  if (c.done) return;
  const key = p.key;
  if (key === null) return c.failMissing("key");
  const v = kv(p.namespace).get(key);
  const json = new Bytes().str(v === null ? '{"found":false,"value":' : '{"found":true,"value":');
  json.jsonString(v === null ? new Uint8Array(0) : v);
  c.resultJson(json.str("}").done());
}

function kvDelete(c: Call): void {
  const p = params(c, ["namespace", "key"]);
  if (c.done) return;
  const key = p.key;
  if (key === null) return c.failMissing("key");
  kv(p.namespace).delete(key);
  c.resultText(utf8("deleted"));
}

function kvKeys(c: Call): void {
  const p = params(c, ["namespace", "prefix"]);
  if (c.done) return;
  const keys = kv(p.namespace).keys(p.prefix);
  const json = new Bytes().str('{"keys":[');
  for (let k = 0; k < keys.length; k++) {
    if (k > 0) json.str(",");
    json.jsonString(utf8(keys[k]));
  }
  c.resultJson(json.str("]}").done());
}

export function call(): i32 {
  const c = Call.begin("kv_set, kv_get, kv_delete, kv_keys");
  if (c.done) return c.end();
  const name = String.UTF8.decode(c.name.buffer);
  if (name == "kv_set") kvSet(c);
  else if (name == "kv_get") kvGet(c);
  else if (name == "kv_delete") kvDelete(c);
  else kvKeys(c);
  return c.end();
}
