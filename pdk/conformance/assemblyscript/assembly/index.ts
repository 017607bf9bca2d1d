// word_count: the conformance tool of the AssemblyScript PDK
// (pdk/conformance/SPEC.md).
//
// Build: ../../assemblyscript/node_modules/.bin/asc assembly/index.ts \
//            --config asconfig.json -o word_count.wasm

import { Bytes, Call, bytesEqual, describe as setDescribe, utf8Decode } from "../../../assemblyscript/assembly/autoagent";

const DESCRIBE =
  '{"tools":[{"name":"word_count",' +
  '"description":"Counts the words, lines and characters (Unicode code points) of a text.",' +
  '"inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"the text to count"}},' +
  '"required":["text"],"additionalProperties":false},' +
  '"outputSchema":{"type":"object","properties":{' +
  '"words":{"type":"integer","description":"runs of characters between whitespace"},' +
  '"lines":{"type":"integer","description":"newline-terminated lines, plus an unterminated last one"},' +
  '"chars":{"type":"integer","description":"Unicode code points"}},' +
  '"required":["words","lines","chars"],"additionalProperties":false},' +
  '"annotations":{"readOnlyHint":true,"idempotentHint":true}}]}';

export function describe(): i32 {
  return setDescribe(DESCRIBE);
}

// isSpace reports Unicode White_Space, the set Go's unicode.IsSpace uses.
function isSpace(r: u32): bool {
  return (
    (r >= 0x09 && r <= 0x0d) || r == 0x20 || r == 0x85 || r == 0xa0 || r == 0x1680 ||
    (r >= 0x2000 && r <= 0x200a) || r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000
  );
}

export function call(): i32 {
  const c = Call.begin("word_count");
  if (c.done) return c.end();
  const args = c.args();
  if (c.done) return c.end();
  let text = -1;
  for (let k = 0; k < args.length; k++) {
    const a = args[k];
    if (!bytesEqual(a.key, "text")) {
      c.failUnknown(a);
      return c.end();
    }
    if (c.type(a) != "string") {
      c.failType(a, "string");
      return c.end();
    }
    text = k; // the last "text" counts
  }
  if (text < 0) {
    c.failMissing("text");
    return c.end();
  }
  const s = c.string(args[text]);
  let words: u64 = 0;
  let lines: u64 = 0;
  let chars: u64 = 0;
  let inWord = false;
  for (let i = 0; i < s.length; ) {
    const d = utf8Decode(s, i, s.length);
    const r = d & 0x1fffff;
    i += <i32>(d >> 21);
    chars++;
    if (r == 0x0a) lines++;
    if (isSpace(r)) inWord = false;
    else if (!inWord) {
      inWord = true;
      words++;
    }
  }
  if (s.length > 0 && s[s.length - 1] != 0x0a) lines++;
  c.resultJson(new Bytes().str('{"words":').uint(words).str(',"lines":').uint(lines).str(',"chars":').uint(chars).str("}").done());
  return c.end();
}
