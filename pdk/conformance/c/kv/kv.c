/* kv: the key-value conformance module of the C PDK (pdk/conformance/SPEC.md,
 * "The kv module"): one tool per operation of the kv capability.
 *
 * Build: clang --target=wasm32-wasi -Oz -mexec-model=reactor -Wl,--strip-all \
 *            -I ../../../c -o kv.wasm kv.c
 */
#include "autoagent.h"

static const char DESCRIBE[] =
    "{\"tools\":[{\"name\":\"kv_set\",\"description\":\"Stores a value under a key.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"namespace\":{\"type\":\"string\",\"description\":\"the kv namespace; empty or absent for the module's only one\"},\"key\":{\"type\":\"string\",\"description\":\"the key\"},\"value\":{\"type\":\"string\",\"description\":\"the value to store\"}},\"required\":[\"key\",\"value\"],\"additionalProperties\":false}}"
    ",{\"name\":\"kv_get\",\"description\":\"Reads the value stored under a key.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"namespace\":{\"type\":\"string\",\"description\":\"the kv namespace; empty or absent for the module's only one\"},\"key\":{\"type\":\"string\",\"description\":\"the key\"}},\"required\":[\"key\"],\"additionalProperties\":false},\"outputSchema\":{\"type\":\"object\",\"properties\":{\"found\":{\"type\":\"boolean\",\"description\":\"whether the key holds a value\"},\"value\":{\"type\":\"string\",\"description\":\"the value, empty when not found\"}},\"required\":[\"found\",\"value\"],\"additionalProperties\":false}}"
    ",{\"name\":\"kv_delete\",\"description\":\"Removes a key.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"namespace\":{\"type\":\"string\",\"description\":\"the kv namespace; empty or absent for the module's only one\"},\"key\":{\"type\":\"string\",\"description\":\"the key\"}},\"required\":[\"key\"],\"additionalProperties\":false}}"
    ",{\"name\":\"kv_keys\",\"description\":\"Lists the keys that start with a prefix.\",\"inputSchema\":{\"type\":\"object\",\"properties\":{\"namespace\":{\"type\":\"string\",\"description\":\"the kv namespace; empty or absent for the module's only one\"},\"prefix\":{\"type\":\"string\",\"description\":\"list only the keys starting with this; empty or absent for all\"}},\"additionalProperties\":false},\"outputSchema\":{\"type\":\"object\",\"properties\":{\"keys\":{\"type\":[\"null\",\"array\"],\"description\":\"the keys, in byte order\",\"items\":{\"type\":\"string\"}}},\"required\":[\"keys\"],\"additionalProperties\":false}}],\"capabilities\":[\"kv\"]}";

AA_EXPORT("describe") int32_t describe(void) { return aa_describe(DESCRIBE); }

/* The string arguments a tool takes, decoded (NULL when absent). The
 * value is counted, as it may hold NUL bytes; keys and namespaces are C
 * strings, as the header takes them. */
typedef struct {
    char *namespace, *key, *prefix;
    aa_str value;
} params;

/* read_params walks the arguments: each must be one of the properties
 * named in allowed, and a string. It reports the first problem as the
 * call's result and returns false. */
static bool read_params(aa_call *c, const char *const *allowed, params *p) {
    aa_args it;
    aa_arg a = {0};
    memset(p, 0, sizeof *p);
    if (!aa_args_begin(c, &it)) return false;
    while (aa_args_next(&it, &a)) {
        bool known = false;
        for (const char *const *name = allowed; *name && !known; name++) known = aa_str_eq(a.key, *name);
        if (!known) {
            aa_fail_unknown_property(c, &a);
            break;
        }
        if (strcmp(aa_arg_type(c, &a), "string") != 0) {
            aa_fail_type(c, &a, "string");
            break;
        }
        aa_str v = aa_arg_string(c, &a);
        if (aa_str_eq(a.key, "value")) {
            free((void *)p->value.p); /* the last one counts */
            p->value = v;
            continue;
        }
        char **slot = aa_str_eq(a.key, "namespace") ? &p->namespace : aa_str_eq(a.key, "key") ? &p->key : &p->prefix;
        free(*slot);
        *slot = (char *)v.p;
    }
    free((void *)a.key.p);
    return !c->done;
}

static void free_params(params *p) {
    free(p->namespace);
    free(p->key);
    free((void *)p->value.p);
    free(p->prefix);
}

static void kv_set(aa_call *c, params *p) {
    static const char *const allowed[] = {"namespace", "key", "value", NULL};
    if (!read_params(c, allowed, p)) return;
    if (!p->key) aa_fail_missing(c, "key");
    else if (!p->value.p) aa_fail_missing(c, "value");
    else {
        aa_kv_set(p->namespace, p->key, p->value.p, p->value.n);
        aa_result_text(c, aa_cstr("stored"));
    }
}

static void kv_get(aa_call *c, params *p) {
    static const char *const allowed[] = {"namespace", "key", NULL};
    if (!read_params(c, allowed, p)) return;
    if (!p->key) {
        aa_fail_missing(c, "key");
        return;
    }
    aa_str v = {0};
    bool found = aa_kv_get(p->namespace, p->key, &v);
    aa_buf json = {0};
    aa_buf_puts(&json, found ? "{\"found\":true,\"value\":" : "{\"found\":false,\"value\":");
    aa_buf_json_string(&json, v);
    aa_buf_puts(&json, "}");
    aa_result_json(c, (aa_str){json.p, json.n});
    free(json.p);
    free((void *)v.p);
}

static void kv_delete(aa_call *c, params *p) {
    static const char *const allowed[] = {"namespace", "key", NULL};
    if (!read_params(c, allowed, p)) return;
    if (!p->key) aa_fail_missing(c, "key");
    else {
        aa_kv_delete(p->namespace, p->key);
        aa_result_text(c, aa_cstr("deleted"));
    }
}

static void kv_keys(aa_call *c, params *p) {
    static const char *const allowed[] = {"namespace", "prefix", NULL};
    if (!read_params(c, allowed, p)) return;
    aa_keys keys;
    if (!aa_kv_keys(p->namespace, p->prefix, &keys)) {
        aa_result_error(c, aa_cstr("the host sent a malformed key list"));
        return;
    }
    aa_buf json = {0};
    aa_buf_puts(&json, "{\"keys\":[");
    for (size_t i = 0; i < keys.n; i++) {
        if (i) aa_buf_puts(&json, ",");
        aa_buf_json_string(&json, keys.v[i]);
    }
    aa_buf_puts(&json, "]}");
    aa_result_json(c, (aa_str){json.p, json.n});
    free(json.p);
    aa_keys_free(&keys);
}

AA_EXPORT("call") int32_t call(void) {
    aa_call c;
    params p = {0};
    if (aa_call_begin(&c, NULL)) {
        if (aa_str_eq(c.name, "kv_set")) kv_set(&c, &p);
        else if (aa_str_eq(c.name, "kv_get")) kv_get(&c, &p);
        else if (aa_str_eq(c.name, "kv_delete")) kv_delete(&c, &p);
        else if (aa_str_eq(c.name, "kv_keys")) kv_keys(&c, &p);
        else aa_fail_unknown_tool(&c, "kv_set, kv_get, kv_delete, kv_keys");
    }
    free_params(&p);
    return aa_call_end(&c);
}
