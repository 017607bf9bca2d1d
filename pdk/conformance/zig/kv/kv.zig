//! kv: the key-value conformance module of the Zig PDK
//! (pdk/conformance/SPEC.md, "The kv module"): one tool per operation of the
//! kv capability.
//!
//! Build: zig build-lib --mod autoagent::../../../zig/autoagent.zig --deps autoagent \
//!            kv.zig -target wasm32-wasi -dynamic -rdynamic -O ReleaseSmall --stack 65536 \
//!            -femit-bin=kv.wasm

const std = @import("std");
const aa = @import("autoagent");

// The describe document, one tool a line (a multiline string joins its
// lines with newlines, which are dropped at compile time).
const describe_doc = blk: {
    @setEvalBranchQuota(100000);
    const lines =
    \\{"tools":[{"name":"kv_set","description":"Stores a value under a key.","inputSchema":{"type":"object","properties":{"namespace":{"type":"string","description":"the kv namespace; empty or absent for the module's only one"},"key":{"type":"string","description":"the key"},"value":{"type":"string","description":"the value to store"}},"required":["key","value"],"additionalProperties":false}}
    \\,{"name":"kv_get","description":"Reads the value stored under a key.","inputSchema":{"type":"object","properties":{"namespace":{"type":"string","description":"the kv namespace; empty or absent for the module's only one"},"key":{"type":"string","description":"the key"}},"required":["key"],"additionalProperties":false},"outputSchema":{"type":"object","properties":{"found":{"type":"boolean","description":"whether the key holds a value"},"value":{"type":"string","description":"the value, empty when not found"}},"required":["found","value"],"additionalProperties":false}}
    \\,{"name":"kv_delete","description":"Removes a key.","inputSchema":{"type":"object","properties":{"namespace":{"type":"string","description":"the kv namespace; empty or absent for the module's only one"},"key":{"type":"string","description":"the key"}},"required":["key"],"additionalProperties":false}}
    \\,{"name":"kv_keys","description":"Lists the keys that start with a prefix.","inputSchema":{"type":"object","properties":{"namespace":{"type":"string","description":"the kv namespace; empty or absent for the module's only one"},"prefix":{"type":"string","description":"list only the keys starting with this; empty or absent for all"}},"additionalProperties":false},"outputSchema":{"type":"object","properties":{"keys":{"type":["null","array"],"description":"the keys, in byte order","items":{"type":"string"}}},"required":["keys"],"additionalProperties":false}}],"capabilities":["kv"]}
    ;
    var out: [lines.len]u8 = undefined;
    var n: usize = 0;
    for (lines) |c| {
        if (c != '\n') {
            out[n] = c;
            n += 1;
        }
    }
    const doc = out[0..n].*;
    break :blk &doc;
};

export fn describe() i32 {
    return aa.describe(describe_doc);
}

/// The string arguments a tool takes, decoded (null when absent).
const Params = struct {
    namespace: ?[]u8 = null,
    key: ?[]u8 = null,
    value: ?[]u8 = null,
    prefix: ?[]u8 = null,

    fn deinit(self: *Params) void {
        inline for (.{ "namespace", "key", "value", "prefix" }) |f| {
            if (@field(self, f)) |v| aa.allocator.free(v);
        }
    }
};

/// Reads the arguments: each must be one of the properties named in
/// allowed, and a string; the last of a repeated one counts. A problem is
/// written as the call's result (c.done).
fn params(c: *aa.Call, allowed: []const []const u8, p: *Params) void {
    const args = c.args();
    defer c.freeArgs(args);
    if (c.done) return;
    for (args) |a| {
        var known = false;
        for (allowed) |name| known = known or std.mem.eql(u8, a.key, name);
        if (!known) return c.failUnknown(a);
        if (!std.mem.eql(u8, c.typeOf(a), "string")) return c.failType(a, "string");
        const slot = if (std.mem.eql(u8, a.key, "namespace"))
            &p.namespace
        else if (std.mem.eql(u8, a.key, "key"))
            &p.key
        else if (std.mem.eql(u8, a.key, "value"))
            &p.value
        else
            &p.prefix;
        if (slot.*) |old| aa.allocator.free(old);
        slot.* = c.string(a);
    }
}

fn kvSet(c: *aa.Call, p: *Params) void {
    params(c, &.{ "namespace", "key", "value" }, p);
    if (c.done) return;
    const key = p.key orelse return c.failMissing("key");
    const value = p.value orelse return c.failMissing("value");
    aa.kv(p.namespace orelse "").set(key, value);
    c.resultText("stored");
}

fn kvGet(c: *aa.Call, p: *Params) void {
    params(c, &.{ "namespace", "key" }, p);
    if (c.done) return;
    const key = p.key orelse return c.failMissing("key");
    const v = aa.kv(p.namespace orelse "").get(key);
    defer if (v) |b| aa.allocator.free(b);
    var json = aa.Bytes{};
    defer json.deinit();
    json.put(if (v == null) "{\"found\":false,\"value\":" else "{\"found\":true,\"value\":");
    json.jsonString(v orelse "");
    json.put("}");
    c.resultJson(json.items());
}

fn kvDelete(c: *aa.Call, p: *Params) void {
    params(c, &.{ "namespace", "key" }, p);
    if (c.done) return;
    const key = p.key orelse return c.failMissing("key");
    aa.kv(p.namespace orelse "").delete(key);
    c.resultText("deleted");
}

fn kvKeys(c: *aa.Call, p: *Params) void {
    params(c, &.{ "namespace", "prefix" }, p);
    if (c.done) return;
    const keys = aa.kv(p.namespace orelse "").keys(p.prefix orelse "") catch
        return c.resultError("the host sent a malformed key list");
    defer aa.freeKeys(keys);
    var json = aa.Bytes{};
    defer json.deinit();
    json.put("{\"keys\":[");
    for (keys, 0..) |k, i| {
        if (i > 0) json.put(",");
        json.jsonString(k);
    }
    json.put("]}");
    c.resultJson(json.items());
}

export fn call() i32 {
    var c = aa.Call.begin("kv_set, kv_get, kv_delete, kv_keys");
    defer c.deinit();
    var p = Params{};
    defer p.deinit();
    if (!c.done) {
        if (std.mem.eql(u8, c.name, "kv_set")) {
            kvSet(&c, &p);
        } else if (std.mem.eql(u8, c.name, "kv_get")) {
            kvGet(&c, &p);
        } else if (std.mem.eql(u8, c.name, "kv_delete")) {
            kvDelete(&c, &p);
        } else kvKeys(&c, &p);
    }
    return c.end();
}
