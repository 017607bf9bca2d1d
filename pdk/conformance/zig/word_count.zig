//! word_count: the conformance tool of the Zig PDK (pdk/conformance/SPEC.md).
//!
//! Build: zig build-lib --mod autoagent::../../zig/autoagent.zig --deps autoagent \
//!            word_count.zig -target wasm32-wasi -dynamic -rdynamic -O ReleaseSmall --stack 65536 \
//!            -femit-bin=word_count.wasm

const std = @import("std");
const aa = @import("autoagent");

const describe_doc =
    \\{"tools":[{"name":"word_count","description":"Counts the words, lines and characters (Unicode code points) of a text.","inputSchema":{"type":"object","properties":{"text":{"type":"string","description":"the text to count"}},"required":["text"],"additionalProperties":false},"outputSchema":{"type":"object","properties":{"words":{"type":"integer","description":"runs of characters between whitespace"},"lines":{"type":"integer","description":"newline-terminated lines, plus an unterminated last one"},"chars":{"type":"integer","description":"Unicode code points"}},"required":["words","lines","chars"],"additionalProperties":false},"annotations":{"readOnlyHint":true,"idempotentHint":true}}]}
;

export fn describe() i32 {
    return aa.describe(describe_doc);
}

/// Unicode White_Space, the set Go's unicode.IsSpace uses.
fn isSpace(r: u21) bool {
    return switch (r) {
        0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000 => true,
        else => false,
    };
}

fn wordCount(c: *aa.Call) void {
    const args = c.args();
    defer c.freeArgs(args);
    if (c.done) return;
    var text: ?aa.Arg = null;
    for (args) |a| {
        if (!std.mem.eql(u8, a.key, "text")) return c.failUnknown(a);
        if (!std.mem.eql(u8, c.typeOf(a), "string")) return c.failType(a, "string");
        text = a; // the last "text" counts
    }
    const s = c.string(text orelse return c.failMissing("text"));
    defer aa.allocator.free(s);
    var words: u64 = 0;
    var lines: u64 = 0;
    var chars: u64 = 0;
    var in_word = false;
    var i: usize = 0;
    while (i < s.len) {
        const d = aa.utf8Decode(s[i..]);
        i += d.len;
        chars += 1;
        if (d.r == '\n') lines += 1;
        if (isSpace(d.r)) {
            in_word = false;
        } else if (!in_word) {
            in_word = true;
            words += 1;
        }
    }
    if (s.len > 0 and s[s.len - 1] != '\n') lines += 1;
    var json = aa.Bytes{};
    defer json.deinit();
    json.put("{\"words\":");
    json.uint(words);
    json.put(",\"lines\":");
    json.uint(lines);
    json.put(",\"chars\":");
    json.uint(chars);
    json.put("}");
    c.resultJson(json.items());
}

export fn call() i32 {
    var c = aa.Call.begin("word_count");
    defer c.deinit();
    if (!c.done) wordCount(&c);
    return c.end();
}
