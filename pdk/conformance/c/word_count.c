/* word_count: the conformance tool of the C PDK (pdk/conformance/SPEC.md).
 *
 * Build: clang --target=wasm32-wasi -Oz -mexec-model=reactor -Wl,--strip-all \
 *            -I ../../c -o word_count.wasm word_count.c
 */
#include "autoagent.h"

static const char DESCRIBE[] =
    "{\"tools\":[{\"name\":\"word_count\","
    "\"description\":\"Counts the words, lines and characters (Unicode code points) of a text.\","
    "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"description\":\"the text to count\"}},"
    "\"required\":[\"text\"],\"additionalProperties\":false},"
    "\"outputSchema\":{\"type\":\"object\",\"properties\":{"
    "\"words\":{\"type\":\"integer\",\"description\":\"runs of characters between whitespace\"},"
    "\"lines\":{\"type\":\"integer\",\"description\":\"newline-terminated lines, plus an unterminated last one\"},"
    "\"chars\":{\"type\":\"integer\",\"description\":\"Unicode code points\"}},"
    "\"required\":[\"words\",\"lines\",\"chars\"],\"additionalProperties\":false},"
    "\"annotations\":{\"readOnlyHint\":true,\"idempotentHint\":true}}]}";

AA_EXPORT("describe") int32_t describe(void) { return aa_describe(DESCRIBE); }

/* is_space reports Unicode White_Space, the set Go's unicode.IsSpace uses. */
static bool is_space(uint32_t r) {
    return (r >= 0x09 && r <= 0x0D) || r == 0x20 || r == 0x85 || r == 0xA0 || r == 0x1680 ||
           (r >= 0x2000 && r <= 0x200A) || r == 0x2028 || r == 0x2029 || r == 0x202F || r == 0x205F ||
           r == 0x3000;
}

static void count(aa_call *c, aa_str text) {
    uint64_t words = 0, lines = 0, chars = 0;
    bool in_word = false;
    for (size_t i = 0; i < text.n;) {
        uint32_t r;
        i += aa_utf8_decode(text.p + i, text.n - i, &r);
        chars++;
        if (r == '\n') lines++;
        if (is_space(r)) in_word = false;
        else if (!in_word) {
            in_word = true;
            words++;
        }
    }
    if (text.n > 0 && text.p[text.n - 1] != '\n') lines++;
    aa_buf json = {0};
    aa_buf_puts(&json, "{\"words\":");
    aa_buf_putu(&json, words);
    aa_buf_puts(&json, ",\"lines\":");
    aa_buf_putu(&json, lines);
    aa_buf_puts(&json, ",\"chars\":");
    aa_buf_putu(&json, chars);
    aa_buf_puts(&json, "}");
    aa_result_json(c, (aa_str){json.p, json.n});
    free(json.p);
}

AA_EXPORT("call") int32_t call(void) {
    aa_call c;
    aa_args it;
    aa_arg a = {0};
    size_t text = 0;
    if (!aa_call_begin(&c, "word_count") || !aa_args_begin(&c, &it)) return aa_call_end(&c);
    while (aa_args_next(&it, &a)) {
        if (!aa_str_eq(a.key, "text")) {
            aa_fail_unknown_property(&c, &a);
            break;
        }
        if (strcmp(aa_arg_type(&c, &a), "string") != 0) {
            aa_fail_type(&c, &a, "string");
            break;
        }
        text = a.value; /* the last "text" counts */
    }
    free((void *)a.key.p);
    if (!c.done && !text) aa_fail_missing(&c, "text");
    if (!c.done) {
        aa_str s = aa_json_decode(c.input, text);
        count(&c, s);
        free((void *)s.p);
    }
    return aa_call_end(&c);
}
