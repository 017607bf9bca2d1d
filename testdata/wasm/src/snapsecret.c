/* snapsecret: a guest that keeps each caller's secret in every kind of
 * state an instance has, for the host's snapshot tests (snapshot_test.go).
 * Its initialiser (a constructor: __wasm_call_ctors) leaves a known state:
 * "init" in memory, two pages grown with "heap" at their end (as a
 * runtime's start-up grows its heap), the global set to INIT, the table
 * entry of `clean` unchanged, and the config value "mode" read into
 * memory (a state that depends on the module's grants).
 *   probe   reports the state it finds (and the memory's size in pages),
 *           then writes the call's "secret" into memory (low, in its data,
 *           and high, in the pages the initialiser grew), the global (its
 *           first 8 bytes) and the table (the entry of `clean` then holds
 *           `marked`)
 *   grow    grows the memory by "pages" pages; reports the old size (or
 *           -1) and how many bytes of the new pages were not zero, then
 *           fills them with "fill" (another caller's secret)
 *   attack  keeps "secret" as probe does, then ends as "how" says: "trap",
 *           "exit" (output, then proc_exit(0): a success), "spin" (until
 *           its time limit), "wasi" (fd_fdstat_set_flags on stdout, then a
 *           success), "flood" (64 KiB of output), "grow" (asks for 60 000
 *           pages, which the runtime allows and a host's limit refuses,
 *           and returns 0)
 * With config "trap" set, the initialiser traps; with "clock" set, it
 * reads the clock (as a generator seeded from it would); with "file" set,
 * it looks that path up in its first mount (fd 3) and keeps whether it
 * exists. Built with -DSHARED_SEEDS (snapseeds.wasm) it exports
 * autoagent_shared_seeds, declaring that its instances may share what its
 * initialiser drew from the clock or randomness (host/ABI.md). Built with
 * NO_TABLE (snapreset.wasm, with snapreset.s), it has no instruction that
 * changes a table, so the host may reset its used instances to the
 * snapshot; the table entry then stays `clean`. */
#include "guest.h"

__attribute__((import_module("wasi_snapshot_preview1"), import_name("clock_time_get")))
u32 clock_time_get(u32 id, u64 precision, u64 *out);

__attribute__((import_module("wasi_snapshot_preview1"), import_name("proc_exit")))
_Noreturn void proc_exit(int code);

__attribute__((import_module("wasi_snapshot_preview1"), import_name("fd_fdstat_set_flags")))
u32 fd_fdstat_set_flags(u32 fd, u32 flags);

__attribute__((import_module("wasi_snapshot_preview1"), import_name("path_filestat_get")))
u32 path_filestat_get(u32 fd, u32 flags, const char *path, usize len, void *out);

void global_set(u64);
u64 global_get(void);
#ifndef NO_TABLE
void table_copy(u32 dst, u32 src);
#endif

#define INIT 0x54494e49ULL /* "INIT" */

static const char describe_doc[] =
	"{\"tools\":["
	"{\"name\":\"probe\",\"description\":\"Reports and then keeps the secret.\","
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{\"secret\":{\"type\":\"string\"}}}},"
	"{\"name\":\"grow\",\"description\":\"Grows the memory.\","
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{\"pages\":{\"type\":\"integer\",\"minimum\":0},\"fill\":{\"type\":\"string\"}}}},"
	"{\"name\":\"attack\",\"description\":\"Keeps the secret, then fails.\","
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{\"secret\":{\"type\":\"string\"},\"how\":{\"type\":\"string\"}}}}"
	"]}";

static char stash[256];
static char initmark[8];
static char mode[32];
static char *heapmark;
static char *highstash; /* in the pages the initialiser grew */

static int clean(void) { return 'n'; }
static int marked(void) { return 'T'; }
typedef int (*fn)(void);
/* volatile: the table indices must be read at run time, so the
 * call goes through the table. */
static fn volatile clean_p = clean, marked_p = marked;

__attribute__((constructor)) static void init(void) {
	memcpy(initmark, "init", 5);
	long old = (long)__builtin_wasm_memory_grow(0, 2);
	if (old < 0) __builtin_trap();
	heapmark = (char *)((usize)(old + 2) * 65536 - 16);
	memcpy(heapmark, "heap", 5);
	highstash = (char *)((usize)(old + 1) * 65536);
	global_set(INIT);
	u64 off = extism_config_get(block("trap", 4));
	if (off) __builtin_trap();
	if (extism_config_get(block("clock", 5))) {
		u64 now = 0;
		clock_time_get(0, 1, &now);
		global_set(now ? INIT : 0);
	}
	off = extism_config_get(block("file", 4));
	if (off) {
		usize n;
		char *p = unblock(off, &n);
		static u64 stat[8];
		if (path_filestat_get(3, 0, p, n, stat) == 0) memcpy(mode, "file", 5);
	}
	off = extism_config_get(block("mode", 4));
	if (off) {
		usize n;
		char *v = unblock(off, &n);
		memcpy(mode, v, n < sizeof mode - 1 ? n : sizeof mode - 1);
	}
}

#ifdef SHARED_SEEDS
EXPORT("autoagent_shared_seeds") void shared_seeds(void) {}
#endif

EXPORT("describe") int describe(void) {
	output_str(describe_doc);
	return 0;
}

static void put8(buf *b, u64 v) {
	char s[9];
	memcpy(s, &v, 8);
	s[8] = 0;
	for (int i = 0; i < 8; i++)
		if (s[i] < 32 || s[i] > 126) s[i] = '.';
	put(b, s, 8);
}

/* keep writes the call's "secret" into memory, low and high, the global
 * and the table. */
static void keep(const char *in) {
	char secret[200];
	usize n = str(in, "secret", secret, sizeof secret);
	if (n) {
		memcpy(stash, secret, n);
		stash[n] = 0;
		memcpy(highstash, secret, n);
		highstash[n] = 0;
		u64 g = 0;
		memcpy(&g, secret, n < 8 ? n : 8);
		global_set(g);
#ifndef NO_TABLE
		table_copy((u32)(usize)clean_p, (u32)(usize)marked_p);
#endif
	}
}

static int probe(const char *in) {
	buf b = {0};
	puts_(&b, "{\"content\":[{\"type\":\"text\",\"text\":\"state\"}],\"structuredContent\":{\"stash\":\"");
	puts_(&b, stash);
	puts_(&b, "\",\"global\":\"");
	put8(&b, global_get());
	puts_(&b, "\",\"table\":\"");
	char t = (char)clean_p();
	put(&b, &t, 1);
	puts_(&b, "\",\"init\":\"");
	puts_(&b, initmark);
	puts_(&b, heapmark);
	puts_(&b, "\",\"mode\":\"");
	puts_(&b, mode);
	puts_(&b, "\",\"high\":\"");
	puts_(&b, highstash);
	puts_(&b, "\",\"pages\":");
	putu(&b, (u64)__builtin_wasm_memory_size(0));
	puts_(&b, "}}");
	output(b.p, b.n);

	keep(in);
	return 0;
}

static int attack(const char *in) {
	keep(in);
	char how[16];
	str(in, "how", how, sizeof how);
	if (eq(how, "trap")) __builtin_trap();
	if (eq(how, "exit")) {
		output_str("{\"content\":[{\"type\":\"text\",\"text\":\"exited\"}]}");
		proc_exit(0);
	}
	if (eq(how, "spin"))
		for (volatile int i = 0;; i++) {
		}
	if (eq(how, "wasi")) fd_fdstat_set_flags(1, 0);
	if (eq(how, "flood")) {
		static char big[64 << 10];
		output(big, sizeof big);
		return 0;
	}
	if (eq(how, "grow")) __builtin_wasm_memory_grow(0, 60000);
	output_str("{\"content\":[{\"type\":\"text\",\"text\":\"done\"}]}");
	return 0;
}

static int grow(const char *in) {
	u64 pages = num(in, "pages", 0);
	char fill[64];
	usize fn = str(in, "fill", fill, sizeof fill);
	long old = (long)__builtin_wasm_memory_grow(0, (usize)pages);
	u64 dirty = 0;
	if (old >= 0) {
		unsigned char *p = (unsigned char *)((usize)old * 65536);
		usize n = (usize)pages * 65536;
		for (usize i = 0; i < n; i++) dirty += p[i] != 0;
		for (usize i = 0; fn && i < n; i++) p[i] = (unsigned char)fill[i % fn];
	}
	buf b = {0};
	puts_(&b, "{\"content\":[{\"type\":\"text\",\"text\":\"grown\"}],\"structuredContent\":{\"old\":");
	if (old < 0) puts_(&b, "-1");
	else putu(&b, (u64)old);
	puts_(&b, ",\"dirty\":");
	putu(&b, dirty);
	puts_(&b, "}}");
	output(b.p, b.n);
	return 0;
}

EXPORT("call") int call(void) {
	usize n;
	char *in = input(&n);
	char name[64];
	str(in, "name", name, sizeof name);
	if (eq(name, "probe")) return probe(in);
	if (eq(name, "grow")) return grow(in);
	if (eq(name, "attack")) return attack(in);
	return fail("unknown tool");
}
