/* The Extism kernel of the autoagent host (module extism:host/env, see
 * host/ABI.md 1.1), compiled to WebAssembly and instantiated beside every
 * guest instance that needs it.
 *
 * Extism memory blocks live in this module's own linear memory, so a
 * guest's load_*, store_* and input_load_* calls are WebAssembly-to-
 * WebAssembly calls (a few nanoseconds) instead of exits to Go. The memory
 * belongs to one guest instance only; nothing here is trusted by the host,
 * which bounds-checks everything it reads back.
 *
 * Layout: the stack comes first (an overflow traps), then the state (struct
 * state) in the data section; blocks start at heap_base. A block is an
 * 8-byte header {u32 cap; u32 len} followed by cap bytes (a multiple of 8);
 * len == FREE marks a freed block. A block's offset (its Extism handle) is
 * the address of its data. Offsets below heap_base are never blocks, so a
 * guest cannot reach the state through store_*. The Go side
 * (host/kernel.go) writes the input and allocates and frees blocks in this
 * layout directly: keep the two in step.
 *
 * Every function costs O(1) whatever the guest wrote: store_* can rewrite
 * any header, so nothing walks the blocks. A handle is checked against the
 * header just before it (bounds, alignment, not freed); freed blocks wait
 * on one free list per power-of-two size class, heads kept in the state,
 * the next pointer in the block's first 8 bytes. A list the guest has
 * corrupted is dropped, not followed: the guest only loses its own
 * memory.
 *
 * Capability functions (config, vars, logs, HTTP) are implemented in Go and
 * imported from autoagent:kernel; they are re-exported here because a guest
 * resolves all of extism:host/env to this one module. Nothing else calls
 * out: a failure is recorded in the state and traps (FAIL). */

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned char u8;
typedef unsigned long usize;

#define GO(n) __attribute__((import_module("autoagent:kernel"), import_name(n)))
#define EXPORT(n) __attribute__((export_name(n)))

/* Failure codes for FAIL; the Go side (kernel.Memory.Failure) turns the
 * one that ended a call into the call's error. */
enum {
	F_LOAD = 1,      /* load_* outside the blocks */
	F_STORE = 2,     /* store_* outside the blocks */
	F_INPUT = 3,     /* input_load_* past the input */
	F_OUTPUT = 4,    /* output_set past the output limit */
	F_NOMEM = 5,     /* alloc past the memory limit */
	F_INPUT_SET = 6, /* input_set outside the blocks */
	F_OUTPUT_SET = 7 /* output_set outside the blocks */
};

GO("config_get") u64 go_config_get(u64);
GO("var_get") u64 go_var_get(u64);
GO("var_set") void go_var_set(u64, u64);
GO("get_log_level") u32 go_get_log_level(void);
GO("log_trace") void go_log_trace(u64);
GO("log_debug") void go_log_debug(u64);
GO("log_info") void go_log_info(u64);
GO("log_warn") void go_log_warn(u64);
GO("log_error") void go_log_error(u64);
GO("http_request") u64 go_http_request(u64, u64);
GO("http_status_code") u32 go_http_status_code(void);
GO("http_headers") u64 go_http_headers(void);

#define FREE 0xffffffffu
#define MAX_BLOCK 0xfffffff0ull /* the largest len a header holds */
#define SPLIT 64                /* a reused block is split when this much is left */
#define CLASSES 32              /* free lists: class k holds caps in [2^k, 2^(k+1)) */

/* The order and size of the fields are part of the contract with Go. */
struct state {
	u64 input_off, input_len;
	u64 output_off, output_len;
	u64 error_off;
	u64 heap_base, heap_top;
	u64 output_limit;
	u64 free_count;
	u64 free_head[CLASSES]; /* header address of each list's first block, 0 when empty */
	u64 fail_code, fail_arg; /* the failure that ended the call (FAIL), 0 for none */
};

static struct state S;
extern u8 __heap_base;

/* kernel_state and kernel_heap return the addresses of S and of the first
 * block, which the host reads once (they are the same in every instance). */
EXPORT("kernel_state") u32 kernel_state(void) { return (u32)(usize)&S; }
EXPORT("kernel_heap") u32 kernel_heap(void) { return ((u32)(usize)&__heap_base + 7) & ~7u; }

/* FAIL records why the call must end in the state, where the host reads
 * it after the trap, and traps. It is a macro, not a call to Go: a
 * function that makes a call is charged a fuel check, a stack check and a
 * frame by the host's rewrite and its compiler, and load_* and store_*
 * run once per 8 bytes a guest copies (RATIONALE.md, "Why does the
 * kernel trap instead of calling Go when it fails?"). */
#define FAIL(code, arg) (S.fail_code = (code), S.fail_arg = (arg), __builtin_trap())

static u32 *header(u64 h) { return (u32 *)(usize)h; }

static u64 load64(u64 p) {
	u64 v;
	__builtin_memcpy(&v, (const void *)(usize)p, 8);
	return v;
}

static void store64(u64 p, u64 v) { __builtin_memcpy((void *)(usize)p, &v, 8); }

/* span reports whether [p, p+n) lies within the blocks. */
static int span(u64 p, u64 n) { return p >= S.heap_base && p <= S.heap_top && S.heap_top - p >= n; }

/* find returns the header of the live block whose data starts at off, or 0:
 * the header before off must describe a block that lies within the blocks. */
static u64 find(u64 off) {
	if (off < S.heap_base + 8 || off > S.heap_top || (off & 7)) return 0;
	u32 *b = header(off - 8);
	if (b[1] == FREE || b[1] > b[0] || b[0] < 8 || (b[0] & 7) || S.heap_top - off < (u64)b[0]) return 0;
	return off - 8;
}

/* class is the free list of a block of capacity cap (at least 8). */
static u32 class_of(u64 cap) { return 63 - (u32)__builtin_clzll(cap); }

/* push_free puts the block with header h on its free list. */
static void push_free(u64 h) {
	u32 *b = header(h);
	u32 k = class_of(b[0]);
	b[1] = FREE;
	store64(h + 8, S.free_head[k]);
	S.free_head[k] = h;
	S.free_count++;
}

/* pop_free takes a block of at least c bytes off the free lists, or 0. */
static u64 pop_free(u64 c) {
	u32 k = class_of(c);
	if (c & (c - 1)) k++; /* every block of class k holds at least 2^k >= c */
	for (; k < CLASSES; k++) {
		u64 h = S.free_head[k];
		if (!h) continue;
		u32 *b = header(h);
		if (h < S.heap_base || (h & 7) || h + 16 > S.heap_top || b[1] != FREE || b[0] < c ||
		    S.heap_top - (h + 8) < (u64)b[0]) {
			S.free_head[k] = 0; /* the guest wrote over the list */
			continue;
		}
		S.free_head[k] = load64(h + 8);
		S.free_count--;
		return h;
	}
	return 0;
}

EXPORT("alloc") u64 k_alloc(u64 n) {
	if (n == 0) return 0;
	if (n > MAX_BLOCK) FAIL(F_NOMEM, n);
	u64 c = (n + 7) & ~7ull;
	if (S.free_count) {
		u64 h = pop_free(c);
		if (h) {
			u32 *b = header(h);
			if (b[0] - c >= SPLIT) {
				u32 *rest = header(h + 8 + c);
				rest[0] = b[0] - (u32)c - 8;
				b[0] = (u32)c;
				push_free(h + 8 + c);
			}
			b[1] = (u32)n;
			return h + 8;
		}
	}
	u64 h = S.heap_top, end = h + 8 + c;
	u64 have = (u64)__builtin_wasm_memory_size(0) << 16;
	if (end > have) {
		u64 pages = (end - have + 0xffff) >> 16;
		if (pages > 0x10000 || __builtin_wasm_memory_grow(0, (usize)pages) == (usize)-1) FAIL(F_NOMEM, n);
	}
	u32 *b = header(h);
	b[0] = (u32)c;
	b[1] = (u32)n;
	S.heap_top = end;
	return h + 8;
}

EXPORT("free") void k_free(u64 off) {
	u64 h = find(off);
	if (!h) return;
	u32 *b = header(h);
	if (h + 8 + (u64)b[0] == S.heap_top) {
		S.heap_top = h; /* the last block gives its bytes back */
		return;
	}
	push_free(h);
}

EXPORT("length") u64 k_length(u64 off) {
	u64 h = find(off);
	return h ? header(h)[1] : 0;
}

/* length_unsafe trusts that off is a block, as in Extism, but never reads
 * outside the blocks. */
EXPORT("length_unsafe") u64 k_length_unsafe(u64 off) {
	if (off < S.heap_base + 8 || off > S.heap_top || (off & 7)) return 0;
	u32 n = header(off - 8)[1];
	return n == FREE ? 0 : n;
}

EXPORT("load_u8") u32 k_load_u8(u64 p) {
	if (!span(p, 1)) FAIL(F_LOAD, p);
	return *(u8 *)(usize)p;
}

EXPORT("load_u64") u64 k_load_u64(u64 p) {
	if (!span(p, 8)) FAIL(F_LOAD, p);
	return load64(p);
}

EXPORT("store_u8") void k_store_u8(u64 p, u32 v) {
	if (!span(p, 1)) FAIL(F_STORE, p);
	*(u8 *)(usize)p = (u8)v;
}

EXPORT("store_u64") void k_store_u64(u64 p, u64 v) {
	if (!span(p, 8)) FAIL(F_STORE, p);
	store64(p, v);
}

EXPORT("input_length") u64 k_input_length(void) { return S.input_len; }
EXPORT("input_offset") u64 k_input_offset(void) { return S.input_off; }

EXPORT("input_load_u8") u32 k_input_load_u8(u64 i) {
	if (i >= S.input_len) FAIL(F_INPUT, i);
	return *(u8 *)(usize)(S.input_off + i);
}

EXPORT("input_load_u64") u64 k_input_load_u64(u64 i) {
	if (i > S.input_len || S.input_len - i < 8) FAIL(F_INPUT, i);
	return load64(S.input_off + i);
}

EXPORT("input_set") void k_input_set(u64 off, u64 n) {
	if (!span(off, n)) FAIL(F_INPUT_SET, off);
	S.input_off = off;
	S.input_len = n;
}

EXPORT("output_set") void k_output_set(u64 off, u64 n) {
	if (n > S.output_limit) FAIL(F_OUTPUT, n);
	if (n > 0 && !span(off, n)) FAIL(F_OUTPUT_SET, off);
	S.output_off = off;
	S.output_len = n;
}

EXPORT("output_length") u64 k_output_length(void) { return S.output_len; }
EXPORT("output_offset") u64 k_output_offset(void) { return S.output_off; }
EXPORT("error_set") void k_error_set(u64 off) { S.error_off = off; }
EXPORT("error_get") u64 k_error_get(void) { return S.error_off; }

EXPORT("reset") void k_reset(void) {
	S.heap_top = S.heap_base;
	S.free_count = 0;
	volatile u64 *heads = S.free_head; /* volatile: no memset in a kernel without libc */
	for (u32 k = 0; k < CLASSES; k++) heads[k] = 0;
	S.input_off = S.input_len = 0;
	S.output_off = S.output_len = 0;
	S.error_off = 0;
}

EXPORT("memory_bytes") u64 k_memory_bytes(void) { return S.heap_top - S.heap_base; }

EXPORT("config_get") u64 k_config_get(u64 key) { return go_config_get(key); }
EXPORT("var_get") u64 k_var_get(u64 name) { return go_var_get(name); }
EXPORT("var_set") void k_var_set(u64 name, u64 value) { go_var_set(name, value); }
EXPORT("get_log_level") u32 k_get_log_level(void) { return go_get_log_level(); }
EXPORT("log_trace") void k_log_trace(u64 msg) { go_log_trace(msg); }
EXPORT("log_debug") void k_log_debug(u64 msg) { go_log_debug(msg); }
EXPORT("log_info") void k_log_info(u64 msg) { go_log_info(msg); }
EXPORT("log_warn") void k_log_warn(u64 msg) { go_log_warn(msg); }
EXPORT("log_error") void k_log_error(u64 msg) { go_log_error(msg); }
EXPORT("http_request") u64 k_http_request(u64 req, u64 body) { return go_http_request(req, body); }
EXPORT("http_status_code") u32 k_http_status_code(void) { return go_http_status_code(); }
EXPORT("http_headers") u64 k_http_headers(void) { return go_http_headers(); }
