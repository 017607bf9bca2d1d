/*
 * autoagent.h: the autoagent PDK for C, in one header.
 *
 * A tool module exports two functions, `describe` and `call` (the Extism
 * plugin ABI, see pdk/README.md). This header declares the Extism kernel
 * imports and gives the helpers a tool needs: read the call, walk its
 * arguments, write a result, and use the capabilities the host granted
 * (config, logging, variables, HTTP, key-value storage: get, set, delete
 * and list keys by prefix).
 *
 *   #include "autoagent.h"
 *
 *   AA_EXPORT("describe") int32_t describe(void) { return aa_describe(DESCRIBE_JSON); }
 *   AA_EXPORT("call") int32_t call(void) {
 *       aa_call c;
 *       if (!aa_call_begin(&c, "shout")) return aa_call_end(&c);
 *       ...walk c.args with aa_args_next, then aa_result_text(&c, "...")...
 *       return aa_call_end(&c);
 *   }
 *
 * Build (Debian: clang, lld, wasi-libc, libclang-rt-14-dev-wasm32):
 *
 *   clang --target=wasm32-wasi -Oz -mexec-model=reactor -Wl,--strip-all \
 *         -I pdk/c -o tool.wasm tool.c
 *
 * or `autoagent tools build tool.c`. The complete example is
 * pdk/conformance/c/word_count.c.
 *
 * Every failure a tool reports is a result with "isError": true, written
 * with the same wording as the Go PDK (pdk/conformance/SPEC.md), so the
 * model reads the same message whatever language a tool is written in.
 * Only the kernel functions a module references become imports: a tool
 * that never calls aa_http_request does not need a net: grant to load.
 */
#ifndef AUTOAGENT_H
#define AUTOAGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define AA_EXPORT(name) __attribute__((export_name(name)))
#define AA_KERNEL(name) __attribute__((import_module("extism:host/env"), import_name(name)))
#define AA_USER(name) __attribute__((import_module("extism:host/user"), import_name(name)))

/* ---- Extism kernel: blocks of host memory named by i64 offsets ---- */

typedef uint64_t aa_block;

AA_KERNEL("input_length") extern uint64_t aa_k_input_length(void);
AA_KERNEL("input_load_u8") extern uint32_t aa_k_input_load_u8(uint64_t i);
AA_KERNEL("input_load_u64") extern uint64_t aa_k_input_load_u64(uint64_t i);
AA_KERNEL("length") extern uint64_t aa_k_length(aa_block b);
AA_KERNEL("alloc") extern aa_block aa_k_alloc(uint64_t n);
AA_KERNEL("free") extern void aa_k_free(aa_block b);
AA_KERNEL("output_set") extern void aa_k_output_set(aa_block b, uint64_t n);
AA_KERNEL("error_set") extern void aa_k_error_set(aa_block b);
AA_KERNEL("load_u8") extern uint32_t aa_k_load_u8(aa_block b);
AA_KERNEL("load_u64") extern uint64_t aa_k_load_u64(aa_block b);
AA_KERNEL("store_u8") extern void aa_k_store_u8(aa_block b, uint32_t v);
AA_KERNEL("store_u64") extern void aa_k_store_u64(aa_block b, uint64_t v);
AA_KERNEL("config_get") extern aa_block aa_k_config_get(aa_block key);
AA_KERNEL("var_get") extern aa_block aa_k_var_get(aa_block name);
AA_KERNEL("var_set") extern void aa_k_var_set(aa_block name, aa_block value);
AA_KERNEL("http_request") extern aa_block aa_k_http_request(aa_block req, aa_block body);
AA_KERNEL("http_status_code") extern int32_t aa_k_http_status_code(void);
AA_KERNEL("log_debug") extern void aa_k_log_debug(aa_block msg);
AA_KERNEL("log_info") extern void aa_k_log_info(aa_block msg);
AA_KERNEL("log_warn") extern void aa_k_log_warn(aa_block msg);
AA_KERNEL("log_error") extern void aa_k_log_error(aa_block msg);
/* autoagent host: key-value storage for kv: grants (host/ABI.md 1.4). */
AA_USER("kv_get") extern aa_block aa_k_kv_get(aa_block ns, aa_block key);
AA_USER("kv_set") extern void aa_k_kv_set(aa_block ns, aa_block key, aa_block value);
AA_USER("kv_delete") extern void aa_k_kv_delete(aa_block ns, aa_block key);
AA_USER("kv_keys") extern aa_block aa_k_kv_keys(aa_block ns, aa_block prefix);

/* A byte string that does not own its memory, unless said otherwise. */
typedef struct {
    const uint8_t *p;
    size_t n;
} aa_str;

static inline aa_str aa_cstr(const char *s) { return (aa_str){(const uint8_t *)s, strlen(s)}; }

static inline bool aa_str_eq(aa_str a, const char *b) {
    size_t n = strlen(b);
    return a.n == n && memcmp(a.p, b, n) == 0;
}

/* aa_block_write copies n bytes into a new host block. */
static inline aa_block aa_block_write(const void *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data;
    aa_block b = aa_k_alloc(n);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v;
        memcpy(&v, p + i, 8);
        aa_k_store_u64(b + i, v);
    }
    for (; i < n; i++) aa_k_store_u8(b + i, p[i]);
    return b;
}

/* aa_block_take copies a host block into malloc'd memory (NUL-terminated,
 * the NUL not counted) and frees the block. Free the result with free(). */
static inline aa_str aa_block_take(aa_block b) {
    size_t n = (size_t)aa_k_length(b);
    uint8_t *p = (uint8_t *)malloc(n + 1);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = aa_k_load_u64(b + i);
        memcpy(p + i, &v, 8);
    }
    for (; i < n; i++) p[i] = (uint8_t)aa_k_load_u8(b + i);
    p[n] = 0;
    aa_k_free(b);
    return (aa_str){p, n};
}

/* ---- a growable byte buffer, and JSON string writing ---- */

typedef struct {
    uint8_t *p;
    size_t n, cap;
} aa_buf;

static inline void aa_buf_put(aa_buf *b, const void *data, size_t n) {
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->n + n) cap *= 2;
        b->p = (uint8_t *)realloc(b->p, cap);
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

static inline void aa_buf_puts(aa_buf *b, const char *s) { aa_buf_put(b, s, strlen(s)); }

static inline void aa_buf_putu(aa_buf *b, uint64_t v) {
    char tmp[24];
    int i = 24;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    aa_buf_put(b, tmp + i, (size_t)(24 - i));
}

/* aa_buf_json_string writes s as a JSON string, escaped as Go's
 * encoding/json does with HTML escaping off (SPEC.md, rule 8). s must be
 * valid UTF-8, which every string aa_json_decode returns is. */
static inline void aa_buf_json_string(aa_buf *b, aa_str s) {
    static const char hex[] = "0123456789abcdef";
    aa_buf_put(b, "\"", 1);
    size_t start = 0;
    for (size_t i = 0; i < s.n; i++) {
        uint8_t c = s.p[i];
        const char *esc = NULL;
        char u[7] = {'\\', 'u', '0', '0', 0, 0, 0};
        size_t skip = 1;
        if (c == '"') esc = "\\\"";
        else if (c == '\\') esc = "\\\\";
        else if (c == '\b') esc = "\\b";
        else if (c == '\f') esc = "\\f";
        else if (c == '\n') esc = "\\n";
        else if (c == '\r') esc = "\\r";
        else if (c == '\t') esc = "\\t";
        else if (c < 0x20) {
            u[4] = hex[c >> 4];
            u[5] = hex[c & 15];
            esc = u;
        } else if (c == 0xE2 && i + 2 < s.n && s.p[i + 1] == 0x80 && (s.p[i + 2] == 0xA8 || s.p[i + 2] == 0xA9)) {
            esc = s.p[i + 2] == 0xA8 ? "\\u2028" : "\\u2029";
            skip = 3;
        }
        if (esc) {
            aa_buf_put(b, s.p + start, i - start);
            aa_buf_puts(b, esc);
            i += skip - 1;
            start = i + 1;
        }
    }
    aa_buf_put(b, s.p + start, s.n - start);
    aa_buf_put(b, "\"", 1);
}

/* ---- JSON reading ---- */

enum { AA_JSON_MAX_DEPTH = 10000 }; /* as Go's encoding/json */

static inline size_t aa_json_ws(aa_str s, size_t i) {
    while (i < s.n && (s.p[i] == ' ' || s.p[i] == '\t' || s.p[i] == '\n' || s.p[i] == '\r')) i++;
    return i;
}

static inline int aa_hexval(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* aa_json_scan_string returns the index after the string starting at i
 * (s.p[i] == '"'), or 0 when it is not a valid JSON string. */
static inline size_t aa_json_scan_string(aa_str s, size_t i) {
    for (i++; i < s.n; i++) {
        uint8_t c = s.p[i];
        if (c == '"') return i + 1;
        if (c < 0x20) return 0;
        if (c == '\\') {
            if (++i >= s.n) return 0;
            c = s.p[i];
            if (c == 'u') {
                for (int k = 1; k <= 4; k++)
                    if (i + k >= s.n || aa_hexval(s.p[i + k]) < 0) return 0;
                i += 4;
            } else if (!strchr("\"\\/bfnrt", c) || c == 0) {
                return 0;
            }
        }
    }
    return 0;
}

static inline size_t aa_json_scan_digits(aa_str s, size_t i) {
    while (i < s.n && s.p[i] >= '0' && s.p[i] <= '9') i++;
    return i;
}

/* aa_json_scan_number returns the index after the number at i, or 0. */
static inline size_t aa_json_scan_number(aa_str s, size_t i) {
    if (i < s.n && s.p[i] == '-') i++;
    if (i >= s.n) return 0;
    if (s.p[i] == '0') i++;
    else if (s.p[i] >= '1' && s.p[i] <= '9') i = aa_json_scan_digits(s, i);
    else return 0;
    if (i < s.n && s.p[i] == '.') {
        size_t j = aa_json_scan_digits(s, i + 1);
        if (j == i + 1) return 0;
        i = j;
    }
    if (i < s.n && (s.p[i] == 'e' || s.p[i] == 'E')) {
        i++;
        if (i < s.n && (s.p[i] == '+' || s.p[i] == '-')) i++;
        size_t j = aa_json_scan_digits(s, i);
        if (j == i) return 0;
        i = j;
    }
    return i;
}

/* aa_json_valid reports whether s is exactly one JSON document (RFC 8259),
 * surrounded by optional whitespace. Iterative, so hostile nesting cannot
 * exhaust the stack. */
static inline bool aa_json_valid(aa_str s) {
    uint8_t *stack = (uint8_t *)malloc(AA_JSON_MAX_DEPTH);
    size_t depth = 0, i = aa_json_ws(s, 0);
    bool ok = false;
    for (;;) {
        /* a value starts at i */
        if (i >= s.n) goto out;
        uint8_t c = s.p[i];
        if (c == '{' || c == '[') {
            if (depth == AA_JSON_MAX_DEPTH) goto out; /* an empty one counts too, as in Go */
            i = aa_json_ws(s, i + 1);
            if (i < s.n && s.p[i] == (c == '{' ? '}' : ']')) {
                i++;
                goto after;
            }
            stack[depth++] = c;
            if (c == '[') continue;
            goto key;
        } else if (c == '"') {
            if (!(i = aa_json_scan_string(s, i))) goto out;
        } else if (c == 't' || c == 'f' || c == 'n') {
            const char *lit = c == 't' ? "true" : c == 'f' ? "false" : "null";
            size_t n = strlen(lit);
            if (s.n - i < n || memcmp(s.p + i, lit, n) != 0) goto out;
            i += n;
        } else {
            if (!(i = aa_json_scan_number(s, i))) goto out;
        }
    after:
        i = aa_json_ws(s, i);
        if (depth == 0) {
            ok = i == s.n;
            goto out;
        }
        if (i >= s.n) goto out;
        if (s.p[i] == ',') {
            i = aa_json_ws(s, i + 1);
            if (stack[depth - 1] == '[') continue;
            goto key;
        }
        if (s.p[i] == (stack[depth - 1] == '{' ? '}' : ']')) {
            depth--;
            i++;
            goto after;
        }
        goto out;
    key:
        if (i >= s.n || s.p[i] != '"' || !(i = aa_json_scan_string(s, i))) goto out;
        i = aa_json_ws(s, i);
        if (i >= s.n || s.p[i] != ':') goto out;
        i = aa_json_ws(s, i + 1);
    }
out:
    free(stack);
    return ok;
}

/* aa_json_skip returns the index after the value at i of a document
 * already known to be valid. */
static inline size_t aa_json_skip(aa_str s, size_t i) {
    size_t depth = 0;
    do {
        uint8_t c = s.p[i];
        if (c == '"') {
            i = aa_json_scan_string(s, i);
        } else if (c == '{' || c == '[') {
            depth++;
            i++;
        } else if (c == '}' || c == ']') {
            depth--;
            i++;
        } else if (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            i++;
        } else {
            while (i < s.n && !strchr(",:]} \t\n\r", s.p[i])) i++;
        }
    } while (depth > 0);
    return i;
}

/* The JSON types, named as the error messages name them. */
static inline const char *aa_json_type(aa_str s, size_t i) {
    switch (s.p[i]) {
    case '{': return "object";
    case '[': return "array";
    case '"': return "string";
    case 't':
    case 'f': return "boolean";
    case 'n': return "null";
    default: return "number";
    }
}

static inline void aa_put_rune(aa_buf *b, uint32_t r) {
    uint8_t u[4];
    size_t n;
    if (r < 0x80) {
        u[0] = (uint8_t)r;
        n = 1;
    } else if (r < 0x800) {
        u[0] = (uint8_t)(0xC0 | r >> 6);
        u[1] = (uint8_t)(0x80 | (r & 0x3F));
        n = 2;
    } else if (r < 0x10000) {
        u[0] = (uint8_t)(0xE0 | r >> 12);
        u[1] = (uint8_t)(0x80 | (r >> 6 & 0x3F));
        u[2] = (uint8_t)(0x80 | (r & 0x3F));
        n = 3;
    } else {
        u[0] = (uint8_t)(0xF0 | r >> 18);
        u[1] = (uint8_t)(0x80 | (r >> 12 & 0x3F));
        u[2] = (uint8_t)(0x80 | (r >> 6 & 0x3F));
        u[3] = (uint8_t)(0x80 | (r & 0x3F));
        n = 4;
    }
    aa_buf_put(b, u, n);
}

/* aa_utf8_decode decodes the code point at p[0:n] as Go's utf8.DecodeRune:
 * it returns the length consumed and sets *r, or returns 1 with
 * *r = 0xFFFD for a byte that does not start a valid sequence. */
static inline size_t aa_utf8_decode(const uint8_t *p, size_t n, uint32_t *r) {
    uint8_t c = p[0];
    *r = 0xFFFD;
    if (c < 0x80) {
        *r = c;
        return 1;
    }
    size_t len;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else return 1;
    if (n < len || p[1] < lo || p[1] > hi) return 1;
    for (size_t k = 2; k < len; k++)
        if (p[k] < 0x80 || p[k] > 0xBF) return 1;
    uint32_t v = c & (len == 2 ? 0x1F : len == 3 ? 0x0F : 0x07);
    for (size_t k = 1; k < len; k++) v = v << 6 | (p[k] & 0x3F);
    *r = v;
    return len;
}

static inline uint32_t aa_u4(const uint8_t *p) {
    return (uint32_t)(aa_hexval(p[0]) << 12 | aa_hexval(p[1]) << 8 | aa_hexval(p[2]) << 4 | aa_hexval(p[3]));
}

/* aa_json_decode decodes the JSON string at i of a valid document into
 * malloc'd UTF-8 (NUL-terminated, NUL not counted), following SPEC.md
 * rule 4: unpaired surrogates and invalid bytes become U+FFFD. Free the
 * result's p with free(). */
static inline aa_str aa_json_decode(aa_str s, size_t i) {
    aa_buf b = {0};
    size_t end = aa_json_scan_string(s, i) - 1;
    for (i++; i < end;) {
        uint8_t c = s.p[i];
        if (c == '\\') {
            c = s.p[i + 1];
            i += 2;
            if (c != 'u') {
                const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
                aa_buf_put(&b, to + (strchr(from, c) - from), 1);
                continue;
            }
            uint32_t r = aa_u4(s.p + i);
            i += 4;
            if (r >= 0xD800 && r <= 0xDFFF) {
                uint32_t r2;
                if (r < 0xDC00 && i + 6 <= end && s.p[i] == '\\' && s.p[i + 1] == 'u' &&
                    (r2 = aa_u4(s.p + i + 2)) >= 0xDC00 && r2 <= 0xDFFF) {
                    r = 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00);
                    i += 6;
                } else {
                    r = 0xFFFD;
                }
            }
            aa_put_rune(&b, r);
        } else if (c < 0x80) {
            aa_buf_put(&b, &c, 1);
            i++;
        } else {
            uint32_t r;
            size_t n = aa_utf8_decode(s.p + i, end - i, &r);
            if (r == 0xFFFD && n == 1) aa_put_rune(&b, r);
            else aa_buf_put(&b, s.p + i, n);
            i += n;
        }
    }
    aa_buf_put(&b, "", 1);
    return (aa_str){b.p, b.n - 1};
}

/* aa_json_member finds the last member named key of the object at i (the
 * last one wins, as in Go) and returns the index of its value, or 0. */
static inline size_t aa_json_member(aa_str s, size_t i, const char *key) {
    size_t found = 0;
    i = aa_json_ws(s, i + 1);
    while (s.p[i] != '}') {
        aa_str k = aa_json_decode(s, i);
        i = aa_json_ws(s, aa_json_scan_string(s, i));
        i = aa_json_ws(s, i + 1); /* ':' */
        if (aa_str_eq(k, key)) found = i;
        free((void *)k.p);
        i = aa_json_ws(s, aa_json_skip(s, i));
        if (s.p[i] == ',') i = aa_json_ws(s, i + 1);
    }
    return found;
}

/* ---- calls ---- */

/* aa_call is one call in progress: its input, the tool name and arguments
 * it names, and the result being written. */
typedef struct {
    aa_str input;   /* the call document (owned) */
    aa_str name;    /* the tool name, decoded (owned) */
    size_t args;    /* index of the arguments value in input, 0 when absent or null */
    aa_buf out;     /* the result document */
    bool done;      /* a result has been written */
} aa_call;

/* aa_result_text writes a successful result holding text. */
static inline void aa_result_text(aa_call *c, aa_str text) {
    aa_buf_puts(&c->out, "{\"content\":[{\"type\":\"text\",\"text\":");
    aa_buf_json_string(&c->out, text);
    aa_buf_puts(&c->out, "}]}");
    c->done = true;
}

/* aa_result_json writes a successful result holding the JSON object json
 * both as text and as structured content, as the Go PDK does for structs. */
static inline void aa_result_json(aa_call *c, aa_str json) {
    aa_buf_puts(&c->out, "{\"content\":[{\"type\":\"text\",\"text\":");
    aa_buf_json_string(&c->out, json);
    aa_buf_puts(&c->out, "}],\"structuredContent\":");
    aa_buf_put(&c->out, json.p, json.n);
    aa_buf_puts(&c->out, "}");
    c->done = true;
}

/* aa_result_error writes a failed result: the model reads message. */
static inline void aa_result_error(aa_call *c, aa_str message) {
    aa_buf_puts(&c->out, "{\"content\":[{\"type\":\"text\",\"text\":");
    aa_buf_json_string(&c->out, message);
    aa_buf_puts(&c->out, "}],\"isError\":true}");
    c->done = true;
}

/* aa_result_errorf joins up to three parts into an error message. */
static inline void aa_result_error3(aa_call *c, const char *a, aa_str b, const char *d) {
    aa_buf m = {0};
    aa_buf_puts(&m, a);
    aa_buf_put(&m, b.p, b.n);
    aa_buf_puts(&m, d);
    aa_result_error(c, (aa_str){m.p, m.n});
    free(m.p);
}

/* aa_call_begin reads the call input. It returns true when the call names
 * the tool `tool`, with c->args pointing at its arguments; otherwise it has
 * written the error result (bad envelope, unknown tool) and returns false.
 * For a module of several tools, pass NULL and compare c->name yourself,
 * calling aa_fail_unknown_tool when nothing matches. */
static inline bool aa_fail_unknown_tool(aa_call *c, const char *offered);

static inline bool aa_call_begin(aa_call *c, const char *tool) {
    memset(c, 0, sizeof *c);
    size_t n = (size_t)aa_k_input_length();
    uint8_t *p = (uint8_t *)malloc(n + 1);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = aa_k_input_load_u64(i);
        memcpy(p + i, &v, 8);
    }
    for (; i < n; i++) p[i] = (uint8_t)aa_k_input_load_u8(i);
    c->input = (aa_str){p, n};
    aa_str s = c->input;
    size_t params, name;
    i = aa_json_ws(s, 0);
    if (!aa_json_valid(s) || s.p[i] != '{' || !(params = aa_json_member(s, i, "params")) ||
        s.p[params] != '{' || !(name = aa_json_member(s, params, "name")) || s.p[name] != '"') {
        aa_result_error(c, aa_cstr("invalid call: input must be {\"params\":{\"name\":\"<tool>\",\"arguments\":{...}}}"));
        return false;
    }
    c->name = aa_json_decode(s, name);
    c->args = aa_json_member(s, params, "arguments");
    if (c->args && s.p[c->args] == 'n') c->args = 0;
    if (tool && !aa_str_eq(c->name, tool)) return aa_fail_unknown_tool(c, tool);
    return true;
}

/* aa_fail_unknown_tool writes the unknown-tool error; offered lists the
 * module's tools, separated by ", ". */
static inline bool aa_fail_unknown_tool(aa_call *c, const char *offered) {
    aa_buf m = {0};
    aa_buf_puts(&m, "unknown tool \"");
    aa_buf_put(&m, c->name.p, c->name.n);
    aa_buf_puts(&m, "\" (this module offers: ");
    aa_buf_puts(&m, offered);
    aa_buf_puts(&m, ")");
    aa_result_error(c, (aa_str){m.p, m.n});
    free(m.p);
    return false;
}

/* aa_call_end sets the call's output and releases the call. Return its
 * value from the `call` export. */
static inline int32_t aa_call_end(aa_call *c) {
    if (!c->done) aa_result_error(c, aa_cstr("the tool wrote no result"));
    aa_k_output_set(aa_block_write(c->out.p, c->out.n), c->out.n);
    free((void *)c->input.p);
    free((void *)c->name.p);
    free(c->out.p);
    memset(c, 0, sizeof *c);
    return 0;
}

/* aa_describe sets the describe document. Return its value from the
 * `describe` export. */
static inline int32_t aa_describe(const char *doc) {
    size_t n = strlen(doc);
    aa_k_output_set(aa_block_write(doc, n), n);
    return 0;
}

/* ---- arguments ---- */

/* aa_args walks the members of the arguments object in document order. */
typedef struct {
    aa_call *c;
    size_t i;
} aa_args;

/* aa_arg is one member: its decoded key (owned by the iterator until the
 * next call) and the index of its value in c->input. */
typedef struct {
    aa_str key;
    size_t value;
} aa_arg;

/* aa_args_begin starts walking the arguments. Absent or null arguments are
 * the empty object; other non-objects write the error result and return
 * false. */
static inline bool aa_args_begin(aa_call *c, aa_args *it) {
    it->c = c;
    it->i = 0;
    if (!c->args) return true;
    if (c->input.p[c->args] != '{') {
        aa_result_error3(c, "invalid arguments: want object, got ", aa_cstr(aa_json_type(c->input, c->args)), "");
        return false;
    }
    it->i = aa_json_ws(c->input, c->args + 1);
    return true;
}

/* aa_args_next moves to the next member; false at the end. */
static inline bool aa_args_next(aa_args *it, aa_arg *a) {
    aa_str s = it->c->input;
    free((void *)a->key.p);
    a->key = (aa_str){0};
    if (!it->i || s.p[it->i] == '}') return false;
    a->key = aa_json_decode(s, it->i);
    size_t i = aa_json_ws(s, aa_json_scan_string(s, it->i));
    a->value = aa_json_ws(s, i + 1);
    i = aa_json_ws(s, aa_json_skip(s, a->value));
    if (s.p[i] == ',') i = aa_json_ws(s, i + 1);
    it->i = i;
    return true;
}

/* aa_arg_string decodes a string member (check aa_arg_type first). Free
 * the result's p with free(). */
static inline aa_str aa_arg_string(aa_call *c, aa_arg *a) { return aa_json_decode(c->input, a->value); }

static inline const char *aa_arg_type(aa_call *c, aa_arg *a) { return aa_json_type(c->input, a->value); }

/* The argument errors, worded as every PDK words them. Each writes the
 * result and returns false. */
static inline bool aa_fail_unknown_property(aa_call *c, aa_arg *a) {
    aa_result_error3(c, "invalid arguments: ", a->key, ": unknown property (not in the schema)");
    return false;
}

static inline bool aa_fail_type(aa_call *c, aa_arg *a, const char *want) {
    aa_buf m = {0};
    aa_buf_puts(&m, "invalid arguments: ");
    aa_buf_put(&m, a->key.p, a->key.n);
    aa_buf_puts(&m, ": want ");
    aa_buf_puts(&m, want);
    aa_buf_puts(&m, ", got ");
    aa_buf_puts(&m, aa_arg_type(c, a));
    aa_result_error(c, (aa_str){m.p, m.n});
    free(m.p);
    return false;
}

static inline bool aa_fail_missing(aa_call *c, const char *property) {
    aa_result_error3(c, "invalid arguments: ", aa_cstr(property), ": required property is missing");
    return false;
}

/* ---- capabilities ---- */

/* aa_config_get returns the config value for key (owned, free p) and
 * whether it is set. Granted env:NAME variables arrive here too. */
static inline bool aa_config_get(const char *key, aa_str *value) {
    aa_block k = aa_block_write(key, strlen(key));
    aa_block v = aa_k_config_get(k);
    aa_k_free(k);
    if (!v) return false;
    *value = aa_block_take(v);
    return true;
}

enum { AA_LOG_DEBUG, AA_LOG_INFO, AA_LOG_WARN, AA_LOG_ERROR };

/* aa_log sends a message to the host's log (for operators, not the model). */
static inline void aa_log(int level, const char *msg) {
    aa_block b = aa_block_write(msg, strlen(msg));
    if (level == AA_LOG_DEBUG) aa_k_log_debug(b);
    else if (level == AA_LOG_INFO) aa_k_log_info(b);
    else if (level == AA_LOG_WARN) aa_k_log_warn(b);
    else aa_k_log_error(b);
}

/* aa_http_request sends an HTTP request through the host (needs a net:
 * grant for the URL's host; a refused request ends the call with the
 * host's error). request is the JSON {"url","method","headers"}; body may
 * be NULL. Returns the status and sets *response (owned, free p). */
static inline int aa_http_request(const char *request, const void *body, size_t body_len, aa_str *response) {
    aa_block b = body ? aa_block_write(body, body_len) : 0;
    aa_block r = aa_k_http_request(aa_block_write(request, strlen(request)), b);
    int status = aa_k_http_status_code();
    *response = r ? aa_block_take(r) : (aa_str){0};
    return status;
}

/* Key-value storage (needs a kv: grant; host/ABI.md 1.4). ns names the
 * namespace (kv:NAME grants NAME); NULL or "" names the module's only one.
 * A namespace that was not granted ends the call with the host's error. */

static inline aa_block aa_kv_ns(const char *ns) { return ns && *ns ? aa_block_write(ns, strlen(ns)) : 0; }

/* aa_kv_get reads key from the namespace ns. Returns false when the key is
 * absent; otherwise sets *value (owned, NUL-terminated: free its p). */
static inline bool aa_kv_get(const char *ns, const char *key, aa_str *value) {
    aa_block n = aa_kv_ns(ns), k = aa_block_write(key, strlen(key));
    aa_block v = aa_k_kv_get(n, k);
    aa_k_free(n);
    aa_k_free(k);
    if (!v) return false;
    *value = aa_block_take(v);
    return true;
}

/* aa_kv_set stores the n bytes of value under key, replacing any previous
 * value. */
static inline void aa_kv_set(const char *ns, const char *key, const void *value, size_t n) {
    aa_block b = aa_kv_ns(ns), k = aa_block_write(key, strlen(key)), v = aa_block_write(value, n);
    aa_k_kv_set(b, k, v);
    aa_k_free(b);
    aa_k_free(k);
    aa_k_free(v);
}

/* aa_kv_delete removes key; deleting a missing key is not an error. */
static inline void aa_kv_delete(const char *ns, const char *key) {
    aa_block n = aa_kv_ns(ns), k = aa_block_write(key, strlen(key));
    aa_k_kv_delete(n, k);
    aa_k_free(n);
    aa_k_free(k);
}

/* aa_keys is a list of keys: n strings (each owned and NUL-terminated), in
 * byte order. Release it with aa_keys_free. */
typedef struct {
    aa_str *v;
    size_t n;
} aa_keys;

static inline void aa_keys_free(aa_keys *keys) {
    for (size_t i = 0; i < keys->n; i++) free((void *)keys->v[i].p);
    free(keys->v);
    *keys = (aa_keys){0};
}

/* aa_kv_keys lists the keys of the namespace ns that start with prefix
 * (NULL or "": every key), in byte order, at most 10000 of them. Returns
 * false, with *keys empty, only when the host's list is not a JSON array
 * of strings (never with the autoagent host). Keys that are not valid
 * UTF-8 arrive with U+FFFD in place of the invalid bytes, as the host
 * encodes the list in JSON. */
static inline bool aa_kv_keys(const char *ns, const char *prefix, aa_keys *keys) {
    aa_block n = aa_kv_ns(ns), p = prefix && *prefix ? aa_block_write(prefix, strlen(prefix)) : 0;
    aa_block b = aa_k_kv_keys(n, p);
    aa_k_free(n);
    aa_k_free(p);
    *keys = (aa_keys){0};
    if (!b) return true; /* an empty block: no keys */
    aa_str doc = aa_block_take(b);
    size_t i = aa_json_ws(doc, 0), cap = 0;
    bool ok = aa_json_valid(doc) && doc.p[i] == '[';
    if (ok) i = aa_json_ws(doc, i + 1);
    while (ok && doc.p[i] != ']') {
        if (doc.p[i] != '"') {
            ok = false;
            break;
        }
        if (keys->n == cap) {
            cap = cap ? cap * 2 : 16;
            keys->v = (aa_str *)realloc(keys->v, cap * sizeof *keys->v);
        }
        keys->v[keys->n++] = aa_json_decode(doc, i);
        i = aa_json_ws(doc, aa_json_scan_string(doc, i));
        if (doc.p[i] == ',') i = aa_json_ws(doc, i + 1);
    }
    free((void *)doc.p);
    if (!ok) aa_keys_free(keys);
    return ok;
}

#endif /* AUTOAGENT_H */
