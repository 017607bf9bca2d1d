// autoagent PDK for AssemblyScript: one file, no dependencies beyond the
// compiler and @assemblyscript/wasi-shim.
//
//   import { Call, describe as setDescribe } from "./autoagent";
//
//   export function describe(): i32 { return setDescribe(DESCRIBE); }
//
//   export function call(): i32 {
//     const c = Call.begin("shout");
//     if (c.done) return c.end();
//     const args = c.args();
//     ...for each Arg: a.key, a.type(), c.string(a); c.failUnknown(a) ...
//     c.resultText(String.UTF8.encode(...));
//     return c.end();
//   }
//
// Build with asconfig.json beside this folder (it extends the WASI shim and
// exports the start function as `_initialize`, so hosts initialise the
// module once, as a reactor):
//
//   npx asc assembly/index.ts --config asconfig.json -o tool.wasm
//
// or `autoagent tools build DIR`. The complete example is
// pdk/conformance/assemblyscript/assembly/index.ts.
//
// Memory: asconfig.json selects AssemblyScript's "minimal" runtime, which
// collects garbage only at c.end(), between calls; a call's garbage stays
// until it ends. A tool whose one call makes more garbage than the
// module's memory limit sets "runtime": "incremental" in its asconfig.json
// (collection during the call, each call slower); c.end() must be the
// call's last word either way.
//
// AssemblyScript strings are UTF-16, so the kit works on UTF-8 bytes
// (Uint8Array) throughout: a tool sees exactly the bytes every other PDK
// sees, and its errors are worded as in every other PDK
// (pdk/conformance/SPEC.md). There are no exceptions: a failure is written
// as the call's result with one of the fail* methods, after which c.done is
// true.

// ---- Extism kernel ----

@external("extism:host/env", "input_length")
declare function input_length(): u64;
@external("extism:host/env", "input_load_u8")
declare function input_load_u8(i: u64): u32;
@external("extism:host/env", "input_load_u64")
declare function input_load_u64(i: u64): u64;
@external("extism:host/env", "length")
declare function length(b: u64): u64;
@external("extism:host/env", "alloc")
declare function alloc(n: u64): u64;
@external("extism:host/env", "free")
declare function free(b: u64): void;
@external("extism:host/env", "output_set")
declare function output_set(b: u64, n: u64): void;
@external("extism:host/env", "load_u8")
declare function load_u8(b: u64): u32;
@external("extism:host/env", "load_u64")
declare function load_u64(b: u64): u64;
@external("extism:host/env", "store_u8")
declare function store_u8(b: u64, v: u32): void;
@external("extism:host/env", "store_u64")
declare function store_u64(b: u64, v: u64): void;
@external("extism:host/env", "config_get")
declare function config_get(key: u64): u64;
@external("extism:host/env", "log_info")
declare function log_info(msg: u64): void;
@external("extism:host/env", "http_request")
declare function http_request(req: u64, body: u64): u64;
@external("extism:host/env", "http_status_code")
declare function http_status_code(): i32;
@external("extism:host/user", "kv_get")
declare function kv_get(ns: u64, key: u64): u64;
@external("extism:host/user", "kv_set")
declare function kv_set(ns: u64, key: u64, value: u64): void;
@external("extism:host/user", "kv_delete")
declare function kv_delete(ns: u64, key: u64): void;
@external("extism:host/user", "kv_keys")
declare function kv_keys(ns: u64, prefix: u64): u64;

export function blockWrite(data: Uint8Array): u64 {
  const n = data.length;
  const b = alloc(<u64>n);
  let i = 0;
  for (; i + 8 <= n; i += 8) store_u64(b + <u64>i, load<u64>(data.dataStart + <usize>i));
  for (; i < n; i++) store_u8(b + <u64>i, <u32>data[i]);
  return b;
}

export function blockTake(b: u64): Uint8Array {
  const n = <i32>length(b);
  const out = new Uint8Array(n);
  let i = 0;
  for (; i + 8 <= n; i += 8) store<u64>(out.dataStart + <usize>i, load_u64(b + <u64>i));
  for (; i < n; i++) out[i] = <u8>load_u8(b + <u64>i);
  free(b);
  return out;
}

function readInput(): Uint8Array {
  const n = <i32>input_length();
  const out = new Uint8Array(n);
  let i = 0;
  for (; i + 8 <= n; i += 8) store<u64>(out.dataStart + <usize>i, input_load_u64(<u64>i));
  for (; i < n; i++) out[i] = <u8>input_load_u8(<u64>i);
  return out;
}

function setOutput(data: Uint8Array): void {
  output_set(blockWrite(data), <u64>data.length);
}

// ---- bytes ----

/** A growable byte buffer. Bulk writes copy with memory.copy and strings
 * are encoded straight into it: a small call builds its result without
 * an allocation per piece. */
export class Bytes {
  buf: Uint8Array = new Uint8Array(64);
  n: i32 = 0;

  /** Makes room for k more bytes. */
  room(k: i32): void {
    const need = this.n + k;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const grown = new Uint8Array(cap);
    memory.copy(grown.dataStart, this.buf.dataStart, <usize>this.n);
    this.buf = grown;
  }

  byte(c: i32): Bytes {
    this.room(1);
    store<u8>(this.buf.dataStart + <usize>this.n, <u8>c);
    this.n++;
    return this;
  }

  /** Appends s[from:to]. */
  range(s: Uint8Array, from: i32, to: i32): Bytes {
    const k = to - from;
    if (k <= 0) return this;
    this.room(k);
    memory.copy(this.buf.dataStart + <usize>this.n, s.dataStart + <usize>from, <usize>k);
    this.n += k;
    return this;
  }

  bytes(b: Uint8Array): Bytes {
    return this.range(b, 0, b.length);
  }

  str(s: string): Bytes {
    const k = String.UTF8.byteLength(s);
    this.room(k);
    String.UTF8.encodeUnsafe(changetype<usize>(s), s.length, this.buf.dataStart + <usize>this.n);
    this.n += k;
    return this;
  }

  uint(v: u64): Bytes {
    let k = 1;
    for (let t = v; t >= 10; t /= 10) k++;
    this.room(k);
    let at = this.buf.dataStart + <usize>(this.n + k);
    do {
      at--;
      store<u8>(at, <u8>(0x30 + <i32>(v % 10)));
      v /= 10;
    } while (v > 0);
    this.n += k;
    return this;
  }

  rune(r: u32): Bytes {
    if (r < 0x80) return this.byte(r);
    if (r < 0x800) return this.byte(0xc0 | (r >> 6)).byte(0x80 | (r & 0x3f));
    if (r < 0x10000) return this.byte(0xe0 | (r >> 12)).byte(0x80 | ((r >> 6) & 0x3f)).byte(0x80 | (r & 0x3f));
    return this.byte(0xf0 | (r >> 18)).byte(0x80 | ((r >> 12) & 0x3f)).byte(0x80 | ((r >> 6) & 0x3f)).byte(0x80 | (r & 0x3f));
  }

  /** Writes s (valid UTF-8) as a JSON string, escaped as Go's encoding/json
   * does with HTML escaping off (SPEC.md rule 8). Runs of bytes that need
   * no escape are copied whole. */
  jsonString(s: Uint8Array): Bytes {
    const hex = "0123456789abcdef";
    this.room(s.length + 2);
    this.byte(0x22);
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = <i32>at(s, i);
      if (c >= 0x20 && c != 0x22 && c != 0x5c && c != 0xe2) continue;
      if (c == 0xe2 && !(i + 2 < s.length && at(s, i + 1) == 0x80 && (at(s, i + 2) == 0xa8 || at(s, i + 2) == 0xa9))) continue;
      this.range(s, start, i);
      if (c == 0x22) this.byte(0x5c).byte(0x22);
      else if (c == 0x5c) this.byte(0x5c).byte(0x5c);
      else if (c == 0x08) this.str("\\b");
      else if (c == 0x0c) this.str("\\f");
      else if (c == 0x0a) this.str("\\n");
      else if (c == 0x0d) this.str("\\r");
      else if (c == 0x09) this.str("\\t");
      else if (c < 0x20) this.str("\\u00").byte(hex.charCodeAt(c >> 4)).byte(hex.charCodeAt(c & 15));
      else {
        this.str(at(s, i + 2) == 0xa8 ? "\\u2028" : "\\u2029");
        i += 2;
      }
      start = i + 1;
    }
    this.range(s, start, s.length);
    return this.byte(0x22);
  }

  done(): Uint8Array {
    return this.buf.slice(0, this.n);
  }
}

export function utf8(s: string): Uint8Array {
  return Uint8Array.wrap(String.UTF8.encode(s));
}

export function bytesEqual(a: Uint8Array, s: string): bool {
  return rangeEquals(a, 0, a.length, s);
}

/** Reports whether a[from:to] is s encoded in UTF-8; an ASCII s is
 * compared in place, with no allocation. */
function rangeEquals(a: Uint8Array, from: i32, to: i32, s: string): bool {
  let ascii = true;
  for (let k = 0; k < s.length; k++) if (s.charCodeAt(k) >= 0x80) ascii = false;
  if (!ascii) {
    const b = utf8(s);
    if (to - from != b.length) return false;
    for (let i = 0; i < b.length; i++) if (at(a, from + i) != b[i]) return false;
    return true;
  }
  if (to - from != s.length) return false;
  for (let k = 0; k < s.length; k++) if (<i32>at(a, from + k) != s.charCodeAt(k)) return false;
  return true;
}

// ---- JSON ----

/** s[i] without the bounds check: for the scanners' hot loops, whose
 * every index is checked against s.length first or lies inside a
 * document already known to be valid. A tool's own code keeps checked
 * indexing. */
// @ts-ignore: decorator
@inline function at(s: Uint8Array, i: i32): i32 {
  return <i32>load<u8>(s.dataStart + <usize>i);
}

const MAX_DEPTH = 10000; // as Go's encoding/json

function ws(s: Uint8Array, i: i32): i32 {
  while (i < s.length && (at(s, i) == 0x20 || at(s, i) == 0x09 || at(s, i) == 0x0a || at(s, i) == 0x0d)) i++;
  return i;
}

function hexval(c: i32): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

/** Index after the string at i, or -1 when it is not a valid JSON string. */
function scanString(s: Uint8Array, i: i32): i32 {
  for (i++; i < s.length; i++) {
    const c = <i32>at(s, i);
    if (c == 0x22) return i + 1;
    if (c < 0x20) return -1;
    if (c == 0x5c) {
      if (++i >= s.length) return -1;
      const e = <i32>at(s, i);
      if (e == 0x75) {
        for (let k = 1; k <= 4; k++) if (i + k >= s.length || hexval(at(s, i + k)) < 0) return -1;
        i += 4;
      } else if (e != 0x22 && e != 0x5c && e != 0x2f && e != 0x62 && e != 0x66 && e != 0x6e && e != 0x72 && e != 0x74) {
        return -1;
      }
    }
  }
  return -1;
}

function digits(s: Uint8Array, i: i32): i32 {
  while (i < s.length && at(s, i) >= 0x30 && at(s, i) <= 0x39) i++;
  return i;
}

function scanNumber(s: Uint8Array, i: i32): i32 {
  if (i < s.length && at(s, i) == 0x2d) i++;
  if (i >= s.length) return -1;
  if (at(s, i) == 0x30) i++;
  else if (at(s, i) >= 0x31 && at(s, i) <= 0x39) i = digits(s, i);
  else return -1;
  if (i < s.length && at(s, i) == 0x2e) {
    const j = digits(s, i + 1);
    if (j == i + 1) return -1;
    i = j;
  }
  if (i < s.length && (at(s, i) == 0x65 || at(s, i) == 0x45)) {
    i++;
    if (i < s.length && (at(s, i) == 0x2b || at(s, i) == 0x2d)) i++;
    const j = digits(s, i);
    if (j == i) return -1;
    i = j;
  }
  return i;
}

function literal(s: Uint8Array, i: i32, lit: string): i32 {
  if (s.length - i < lit.length) return -1;
  for (let k = 0; k < lit.length; k++) if (<i32>at(s, i + k) != lit.charCodeAt(k)) return -1;
  return i + lit.length;
}

/** Reports whether s is exactly one JSON document (RFC 8259) with optional
 * surrounding whitespace. Iterative, so nesting cannot exhaust the stack. */
export function jsonValid(s: Uint8Array): bool {
  const stack = new Array<u8>();
  let i = ws(s, 0);
  let state = 0; // 0: a value starts at i, 1: after a value, 2: a key starts at i
  for (;;) {
    if (state == 0) {
      if (i >= s.length) return false;
      const c = <i32>at(s, i);
      if (c == 0x7b || c == 0x5b) {
        if (stack.length == MAX_DEPTH) return false; // an empty one counts too, as in Go
        i = ws(s, i + 1);
        if (i < s.length && at(s, i) == (c == 0x7b ? 0x7d : 0x5d)) {
          i++;
          state = 1;
        } else {
          stack.push(<u8>c);
          state = c == 0x7b ? 2 : 0;
        }
        continue;
      }
      if (c == 0x22) i = scanString(s, i);
      else if (c == 0x74) i = literal(s, i, "true");
      else if (c == 0x66) i = literal(s, i, "false");
      else if (c == 0x6e) i = literal(s, i, "null");
      else i = scanNumber(s, i);
      if (i < 0) return false;
      state = 1;
    } else if (state == 1) {
      i = ws(s, i);
      if (stack.length == 0) return i == s.length;
      if (i >= s.length) return false;
      const top = <i32>stack[stack.length - 1];
      if (at(s, i) == 0x2c) {
        i = ws(s, i + 1);
        state = top == 0x5b ? 0 : 2;
      } else if (at(s, i) == (top == 0x7b ? 0x7d : 0x5d)) {
        stack.pop();
        i++;
      } else return false;
    } else {
      if (i >= s.length || at(s, i) != 0x22) return false;
      i = scanString(s, i);
      if (i < 0) return false;
      i = ws(s, i);
      if (i >= s.length || at(s, i) != 0x3a) return false;
      i = ws(s, i + 1);
      state = 0;
    }
  }
  return false; // unreachable: every state returns or continues
}

/** Index after the value at i of a document already known to be valid. */
function skip(s: Uint8Array, i: i32): i32 {
  let depth = 0;
  do {
    const c = <i32>at(s, i);
    if (c == 0x22) i = scanString(s, i);
    else if (c == 0x7b || c == 0x5b) {
      depth++;
      i++;
    } else if (c == 0x7d || c == 0x5d) {
      depth--;
      i++;
    } else if (c == 0x2c || c == 0x3a || c == 0x20 || c == 0x09 || c == 0x0a || c == 0x0d) i++;
    else {
      while (i < s.length) {
        const d = <i32>at(s, i);
        if (d == 0x2c || d == 0x3a || d == 0x5d || d == 0x7d || d == 0x20 || d == 0x09 || d == 0x0a || d == 0x0d) break;
        i++;
      }
    }
  } while (depth > 0);
  return i;
}

/** The JSON type of the value at i, named as the error messages name it. */
function jsonType(s: Uint8Array, i: i32): string {
  const c = <i32>at(s, i);
  if (c == 0x7b) return "object";
  if (c == 0x5b) return "array";
  if (c == 0x22) return "string";
  if (c == 0x74 || c == 0x66) return "boolean";
  if (c == 0x6e) return "null";
  return "number";
}

/** Decodes the code point at s[i:end] as Go's utf8.DecodeRune; returns
 * (length << 21) | code point, with length 1 and U+FFFD for a byte that
 * does not start a valid sequence. */
export function utf8Decode(s: Uint8Array, i: i32, end: i32): u32 {
  const c = <u32>at(s, i);
  const bad: u32 = (1 << 21) | 0xfffd;
  if (c < 0x80) return (1 << 21) | c;
  let len = 0;
  let lo: u32 = 0x80;
  let hi: u32 = 0xbf;
  if (c >= 0xc2 && c <= 0xdf) len = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else return bad;
  if (end - i < len || <u32>at(s, i + 1) < lo || <u32>at(s, i + 1) > hi) return bad;
  for (let k = 2; k < len; k++) if (at(s, i + k) < 0x80 || at(s, i + k) > 0xbf) return bad;
  let v: u32 = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
  for (let k = 1; k < len; k++) v = (v << 6) | (<u32>at(s, i + k) & 0x3f);
  return (<u32>len << 21) | v;
}

function u4(s: Uint8Array, i: i32): u32 {
  return <u32>((hexval(at(s, i)) << 12) | (hexval(at(s, i + 1)) << 8) | (hexval(at(s, i + 2)) << 4) | hexval(at(s, i + 3)));
}

/** Decodes the JSON string at i of a valid document into UTF-8, following
 * SPEC.md rule 4: unpaired surrogates and invalid bytes become U+FFFD. */
export function decode(s: Uint8Array, i: i32): Uint8Array {
  const end = scanString(s, i) - 1;
  let plain = true; // no escape, only ASCII: the bytes as they are
  for (let k = i + 1; k < end; k++) if (at(s, k) == 0x5c || at(s, k) >= 0x80) plain = false;
  if (plain) return s.slice(i + 1, end);
  const out = new Bytes();
  out.room(end - i);
  for (i++; i < end; ) {
    const c = <i32>at(s, i);
    if (c == 0x5c) {
      const e = <i32>at(s, i + 1);
      i += 2;
      if (e == 0x62) out.byte(0x08);
      else if (e == 0x66) out.byte(0x0c);
      else if (e == 0x6e) out.byte(0x0a);
      else if (e == 0x72) out.byte(0x0d);
      else if (e == 0x74) out.byte(0x09);
      else if (e != 0x75) out.byte(e);
      else {
        let r = u4(s, i);
        i += 4;
        if (r >= 0xd800 && r <= 0xdfff) {
          let paired = false;
          if (r < 0xdc00 && i + 6 <= end && at(s, i) == 0x5c && at(s, i + 1) == 0x75) {
            const r2 = u4(s, i + 2);
            if (r2 >= 0xdc00 && r2 <= 0xdfff) {
              r = 0x10000 + ((r - 0xd800) << 10) + (r2 - 0xdc00);
              i += 6;
              paired = true;
            }
          }
          if (!paired) r = 0xfffd;
        }
        out.rune(r);
      }
    } else if (c < 0x80) {
      out.byte(c);
      i++;
    } else {
      const d = utf8Decode(s, i, end);
      const n = <i32>(d >> 21);
      if (n == 1) out.rune(0xfffd);
      else out.range(s, i, i + n);
      i += n;
    }
  }
  return out.done();
}

/** Index of the value of the last member named key of the object at i, or -1. */
function member(s: Uint8Array, i: i32, key: string): i32 {
  let found = -1;
  i = ws(s, i + 1);
  while (at(s, i) != 0x7d) {
    const end = scanString(s, i);
    let match = false;
    let escaped = false;
    for (let k = i + 1; k < end - 1; k++) if (at(s, k) == 0x5c || at(s, k) >= 0x80) escaped = true;
    if (escaped) match = bytesEqual(decode(s, i), key);
    else match = rangeEquals(s, i + 1, end - 1, key);
    i = ws(s, end);
    i = ws(s, i + 1);
    if (match) found = i;
    i = ws(s, skip(s, i));
    if (at(s, i) == 0x2c) i = ws(s, i + 1);
  }
  return found;
}

// ---- calls ----

/** One member of the arguments object: its decoded key and where its value is. */
export class Arg {
  constructor(public key: Uint8Array, public value: i32) {}
}

/** A call in progress. */
export class Call {
  input: Uint8Array = new Uint8Array(0);
  /** The tool name, decoded (UTF-8). */
  name: Uint8Array = new Uint8Array(0);
  argsAt: i32 = -1;
  out: Bytes = new Bytes();
  /** A result has been written. */
  done: bool = false;

  /** Reads the call. When it does not name one of `tools` (names
   * separated by ", ") or is malformed, the error result is written and
   * done is true. */
  static begin(tools: string): Call {
    const c = new Call();
    const s = readInput();
    c.input = s;
    const top = ws(s, 0);
    if (!jsonValid(s) || s[top] != 0x7b) return c.invalidCall();
    const params = member(s, top, "params");
    if (params < 0 || s[params] != 0x7b) return c.invalidCall();
    const name = member(s, params, "name");
    if (name < 0 || s[name] != 0x22) return c.invalidCall();
    c.name = decode(s, name);
    const args = member(s, params, "arguments");
    c.argsAt = args >= 0 && s[args] != 0x6e ? args : -1;
    if (tools.indexOf(", ") < 0) {
      if (bytesEqual(c.name, tools)) return c; // one tool: no list to split
    } else {
      const names = tools.split(", ");
      for (let k = 0; k < names.length; k++) if (bytesEqual(c.name, names[k])) return c;
    }
    c.resultError(new Bytes().str('unknown tool "').bytes(c.name).str('" (this module offers: ').str(tools).str(")").done());
    return c;
  }

  private invalidCall(): Call {
    this.resultError(utf8('invalid call: input must be {"params":{"name":"<tool>","arguments":{...}}}'));
    return this;
  }

  /** The members of the arguments object in document order. Absent or null
   * arguments are the empty object; for anything else that is not an
   * object the error result is written and the list is empty. */
  args(): Arg[] {
    const out = new Array<Arg>();
    if (this.argsAt < 0) return out;
    const s = this.input;
    if (s[this.argsAt] != 0x7b) {
      this.resultError(utf8("invalid arguments: want object, got " + jsonType(s, this.argsAt)));
      return out;
    }
    let i = ws(s, this.argsAt + 1);
    while (s[i] != 0x7d) {
      const key = decode(s, i);
      i = ws(s, scanString(s, i));
      const value = ws(s, i + 1);
      out.push(new Arg(key, value));
      i = ws(s, skip(s, value));
      if (s[i] == 0x2c) i = ws(s, i + 1);
    }
    return out;
  }

  /** The JSON type of a member's value: object, array, string, number, boolean or null. */
  type(a: Arg): string {
    return jsonType(this.input, a.value);
  }

  /** A string member's value, decoded to UTF-8 (check type first). */
  string(a: Arg): Uint8Array {
    return decode(this.input, a.value);
  }

  failUnknown(a: Arg): void {
    this.resultError(new Bytes().str("invalid arguments: ").bytes(a.key).str(": unknown property (not in the schema)").done());
  }

  failType(a: Arg, want: string): void {
    this.resultError(new Bytes().str("invalid arguments: ").bytes(a.key).str(": want " + want + ", got " + this.type(a)).done());
  }

  failMissing(property: string): void {
    this.resultError(utf8("invalid arguments: " + property + ": required property is missing"));
  }

  /** Writes a successful result holding text (UTF-8). */
  resultText(text: Uint8Array): void {
    this.out.str('{"content":[{"type":"text","text":').jsonString(text).str("}]}");
    this.done = true;
  }

  /** Writes a successful result holding the JSON object json as text and
   * as structured content. */
  resultJson(json: Uint8Array): void {
    this.out.str('{"content":[{"type":"text","text":').jsonString(json).str('}],"structuredContent":').bytes(json).str("}");
    this.done = true;
  }

  /** Writes a failed result: the model reads message (UTF-8). */
  resultError(message: Uint8Array): void {
    this.out.str('{"content":[{"type":"text","text":').jsonString(message).str('}],"isError":true}');
    this.done = true;
  }

  /** Sets the call's output and collects the call's garbage; return its
   * value from the `call` export, touching nothing after it. */
  end(): i32 {
    if (!this.done) this.resultError(utf8("the tool wrote no result"));
    setOutput(this.out.done());
    // The "minimal" runtime (asconfig.json) collects only when asked, and
    // it does not see the stack: here the call's objects are all garbage,
    // so one collection frees them and an instance kept for many calls
    // stays flat. The "incremental" runtime collects during the call, at
    // the price of spilling every reference to a shadow stack, which
    // doubled a small call's time (RATIONALE.md).
    __collect();
    return 0;
  }
}

/** Sets the describe document; return its value from the `describe` export. */
export function describe(doc: string): i32 {
  setOutput(utf8(doc));
  return 0;
}

// ---- capabilities ----

/** The config value for key, or null (granted env:NAME variables arrive here too). */
export function config(key: string): string | null {
  const k = blockWrite(utf8(key));
  const v = config_get(k);
  free(k);
  if (v == 0) return null;
  const b = blockTake(v);
  return String.UTF8.decode(b.buffer);
}

/** Logs a message for the operator (never seen by the model). */
export function log(msg: string): void {
  log_info(blockWrite(utf8(msg)));
}

/** An HTTP response. */
export class Response {
  constructor(public status: i32, public body: Uint8Array) {}
}

/** Sends a GET through the host; needs a net: grant for the URL's host (a
 * refused request ends the call with the host's error). */
export function httpGet(url: string): Response {
  const req = new Bytes().str('{"url":').jsonString(utf8(url)).str(',"method":"GET"}').done();
  const r = http_request(blockWrite(req), 0);
  const status = http_status_code();
  return new Response(status, r == 0 ? new Uint8Array(0) : blockTake(r));
}

// ---- key-value storage ----

/** A persistent key-value namespace the host keeps for the module, granted
 * with kv:NAMESPACE (host/ABI.md 1.4). Values survive the instance and the
 * process. A namespace that was not granted ends the call with the host's
 * error. Get one with kv(). */
export class Store {
  constructor(
    /** The namespace; "" names the module's only one. */
    public namespace: string,
  ) {}

  private ns(): u64 {
    return this.namespace.length == 0 ? 0 : blockWrite(utf8(this.namespace));
  }

  /** The value stored under key, or null when there is none. */
  get(key: string): Uint8Array | null {
    const n = this.ns();
    const k = blockWrite(utf8(key));
    const v = kv_get(n, k);
    free(n);
    free(k);
    return v == 0 ? null : blockTake(v);
  }

  /** Stores value under key, replacing any previous value. */
  set(key: string, value: Uint8Array): void {
    const n = this.ns();
    const k = blockWrite(utf8(key));
    const v = blockWrite(value);
    kv_set(n, k, v);
    free(n);
    free(k);
    free(v);
  }

  /** Removes key; removing a missing key is not an error. */
  delete(key: string): void {
    const n = this.ns();
    const k = blockWrite(utf8(key));
    kv_delete(n, k);
    free(n);
    free(k);
  }

  /** The keys that start with prefix ("": every key), in byte order, at
   * most 10000 of them. Keys that are not valid UTF-8 arrive with U+FFFD in
   * place of the invalid bytes, as the host encodes the list in JSON. A
   * list that is not a JSON array of strings (which the autoagent host
   * never sends) aborts the call. */
  keys(prefix: string = ""): string[] {
    const n = this.ns();
    const p = prefix.length == 0 ? <u64>0 : blockWrite(utf8(prefix));
    const b = kv_keys(n, p);
    free(n);
    free(p);
    const out = new Array<string>();
    if (b == 0) return out; // an empty block: no keys
    const s = blockTake(b);
    let i = ws(s, 0);
    if (!jsonValid(s) || s[i] != 0x5b) abort("the host sent a malformed key list");
    i = ws(s, i + 1);
    while (s[i] != 0x5d) {
      if (s[i] != 0x22) abort("the host sent a malformed key list");
      out.push(String.UTF8.decode(decode(s, i).buffer));
      i = ws(s, scanString(s, i));
      if (s[i] == 0x2c) i = ws(s, i + 1);
    }
    return out;
  }
}

/** The store for namespace; "" (the default) names the module's only kv
 * namespace, whatever it is called (the host refuses it when the module
 * was granted none or several). */
export function kv(namespace: string = ""): Store {
  return new Store(namespace);
}

/** kv().get(key): reads key from the module's only kv: namespace. */
export function kvGet(key: string): Uint8Array | null {
  return kv().get(key);
}

/** kv().set(key, value): stores value under key in the module's only kv: namespace. */
export function kvSet(key: string, value: Uint8Array): void {
  kv().set(key, value);
}
