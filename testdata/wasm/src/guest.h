/* guest.h: a minimal freestanding runtime for the Extism-ABI test modules
 * of the autoagent host (no libc). One translation unit per module includes
 * it. The imports follow host/ABI.md. */
#ifndef GUEST_H
#define GUEST_H

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned long usize;

#define ENV(n) __attribute__((import_module("extism:host/env"), import_name(n)))
#define USER(n) __attribute__((import_module("extism:host/user"), import_name(n)))
#define EXPORT(n) __attribute__((export_name(n)))

ENV("input_length") u64 extism_input_length(void);
ENV("input_load_u8") u32 extism_input_load_u8(u64);
ENV("input_load_u64") u64 extism_input_load_u64(u64);
ENV("alloc") u64 extism_alloc(u64);
ENV("free") void extism_free(u64);
ENV("length") u64 extism_length(u64);
ENV("load_u8") u32 extism_load_u8(u64);
ENV("load_u64") u64 extism_load_u64(u64);
ENV("store_u8") void extism_store_u8(u64, u32);
ENV("store_u64") void extism_store_u64(u64, u64);
ENV("output_set") void extism_output_set(u64, u64);
ENV("error_set") void extism_error_set(u64);
ENV("config_get") u64 extism_config_get(u64);
ENV("log_info") void extism_log_info(u64);

void *memcpy(void *dst, const void *src, usize n) {
	unsigned char *d = dst;
	const unsigned char *s = src;
	for (; n >= 8; n -= 8, d += 8, s += 8) {
		u64 w;
		__builtin_memcpy(&w, s, 8);
		__builtin_memcpy(d, &w, 8);
	}
	while (n--) *d++ = *s++;
	return dst;
}

void *memset(void *dst, int c, usize n) {
	unsigned char *d = dst;
	while (n--) *d++ = (unsigned char)c;
	return dst;
}

int memcmp(const void *a, const void *b, usize n) {
	const unsigned char *x = a, *y = b;
	for (; n; n--, x++, y++)
		if (*x != *y) return *x - *y;
	return 0;
}

static int eq(const char *a, const char *b) {
	while (*a && *a == *b) a++, b++;
	return *a == *b;
}

extern unsigned char __heap_base;
static usize heap_top;

/* bump allocates n bytes of linear memory, growing it as needed. */
static void *bump(usize n) {
	if (!heap_top) heap_top = (usize)&__heap_base;
	usize p = (heap_top + 7) & ~(usize)7;
	usize end = p + n;
	usize have = __builtin_wasm_memory_size(0) * 65536;
	if (end > have) {
		if (__builtin_wasm_memory_grow(0, (end - have + 65535) / 65536) == (usize)-1)
			__builtin_trap();
	}
	heap_top = end;
	return (void *)p;
}

static usize slen(const char *s) {
	usize n = 0;
	while (s[n]) n++;
	return n;
}

/* input reads the whole call input into linear memory. It starts the
 * call, so it also frees what earlier calls of a reused instance bumped. */
static char *input(usize *len) {
	heap_top = 0;
	u64 n = extism_input_length();
	char *buf = bump(n + 1);
	u64 i = 0;
	for (; i + 8 <= n; i += 8) {
		u64 v = extism_input_load_u64(i);
		memcpy(buf + i, &v, 8);
	}
	for (; i < n; i++) buf[i] = (char)extism_input_load_u8(i);
	buf[n] = 0;
	*len = n;
	return buf;
}

/* block copies bytes into a new Extism memory block. */
static u64 block(const char *p, usize n) {
	u64 off = extism_alloc(n);
	usize i = 0;
	for (; i + 8 <= n; i += 8) {
		u64 v;
		memcpy(&v, p + i, 8);
		extism_store_u64(off + i, v);
	}
	for (; i < n; i++) extism_store_u8(off + i, (unsigned char)p[i]);
	return off;
}

/* unblock copies an Extism block into linear memory (NUL-terminated). */
static char *unblock(u64 off, usize *len) {
	u64 n = extism_length(off);
	char *buf = bump(n + 1);
	u64 i = 0;
	for (; i + 8 <= n; i += 8) {
		u64 v = extism_load_u64(off + i);
		memcpy(buf + i, &v, 8);
	}
	for (; i < n; i++) buf[i] = (char)extism_load_u8(off + i);
	buf[n] = 0;
	*len = n;
	return buf;
}

static void output(const char *p, usize n) { extism_output_set(block(p, n), n); }
static void output_str(const char *s) { output(s, slen(s)); }

/* fail reports a tool failure: a message and return code 1. */
static int fail(const char *msg) {
	extism_error_set(block(msg, slen(msg)));
	return 1;
}

/* find returns the position just after "key": in s, or 0. */
static const char *find(const char *s, const char *key) {
	usize k = slen(key);
	for (; *s; s++) {
		if (*s != '"') continue;
		usize i = 0;
		while (i < k && s[1 + i] == key[i]) i++;
		if (i == k && s[1 + k] == '"') {
			const char *p = s + 2 + k;
			while (*p == ' ') p++;
			if (*p == ':') {
				p++;
				while (*p == ' ') p++;
				return p;
			}
		}
	}
	return 0;
}

/* str copies the string value of key (without escapes) into out. */
static usize str(const char *s, const char *key, char *out, usize cap) {
	const char *p = find(s, key);
	usize n = 0;
	if (!p || *p != '"') return 0;
	for (p++; *p && *p != '"' && n + 1 < cap; p++) out[n++] = *p;
	out[n] = 0;
	return n;
}

/* num returns the unsigned integer value of key, or def. */
static u64 num(const char *s, const char *key, u64 def) {
	const char *p = find(s, key);
	if (!p || *p < '0' || *p > '9') return def;
	u64 v = 0;
	while (*p >= '0' && *p <= '9') v = v * 10 + (u64)(*p++ - '0');
	return v;
}

/* buf is a growable output buffer in linear memory. */
typedef struct {
	char *p;
	usize n, cap;
} buf;

static void put(buf *b, const char *s, usize n) {
	if (b->n + n > b->cap) {
		usize c = (b->cap ? b->cap * 2 : 256);
		while (c < b->n + n) c *= 2;
		char *np = bump(c);
		memcpy(np, b->p, b->n);
		b->p = np;
		b->cap = c;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void puts_(buf *b, const char *s) { put(b, s, slen(s)); }

/* plain8 reports whether none of the 8 bytes of x needs escaping in a
 * JSON string (no quote, backslash or control character). */
static int plain8(u64 x) {
	const u64 ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	u64 q = x ^ (ones * '"'), bs = x ^ (ones * '\\');
	u64 t = ((q - ones) & ~q) | ((bs - ones) & ~bs) | ((x - ones * 0x20) & ~x);
	return (t & highs) == 0;
}

/* putq appends s as a JSON string, 8 bytes at a time where nothing needs
 * escaping. */
static void putq(buf *b, const char *s, usize n) {
	static const char hex[] = "0123456789abcdef";
	put(b, "\"", 1);
	usize run = 0; /* start of the bytes that need no escape */
	for (usize i = 0; i < n;) {
		if (n - i >= 8) {
			u64 w;
			__builtin_memcpy(&w, s + i, 8);
			if (plain8(w)) {
				i += 8;
				continue;
			}
		}
		unsigned char c = (unsigned char)s[i];
		if (c != '"' && c != '\\' && c >= 0x20) {
			i++;
			continue;
		}
		put(b, s + run, i - run);
		run = ++i;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			put(b, e, 2);
		} else {
			char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
			put(b, e, 6);
		}
	}
	put(b, s + run, n - run);
	put(b, "\"", 1);
}

static void putu(buf *b, u64 v) {
	char t[24];
	int i = 23;
	t[i] = 0;
	do {
		t[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	puts_(b, t + i);
}

/* text_result outputs {"content":[{"type":"text","text":S}]}. */
static int text_result(const char *s, usize n, int is_error) {
	buf b = {0};
	puts_(&b, "{\"content\":[{\"type\":\"text\",\"text\":");
	putq(&b, s, n);
	puts_(&b, "}]");
	if (is_error) puts_(&b, ",\"isError\":true");
	puts_(&b, "}");
	output(b.p, b.n);
	return 0;
}

#endif
