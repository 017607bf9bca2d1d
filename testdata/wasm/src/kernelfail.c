/* kernelfail: each tool makes one Extism kernel function fail, which ends
 * the call with the kernel's reason; trap traps in the guest's own code.
 *   load, store     load_u64 / store_u64 past the blocks
 *   input           input_load_u64 past the input
 *   inputset        input_set outside the blocks
 *   outputset       output_set outside the blocks
 *   outputlimit     output_set longer than the output limit
 *   alloc           alloc of more than a block holds
 *   trap            unreachable, in the guest
 *   kernelloop      store_u64 and load_u64 on a block, forever: the kernel's
 *                   functions have no fuel check of their own, so the
 *                   guest's loop must still end at the time limit */
#include "guest.h"

ENV("input_set") void extism_input_set(u64, u64);

static const char describe_doc[] =
	"{\"tools\":["
	"{\"name\":\"load\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"store\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"input\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"inputset\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"outputset\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"outputlimit\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"alloc\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"trap\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"kernelloop\",\"description\":\"d\",\"inputSchema\":{\"type\":\"object\"}}"
	"]}";

EXPORT("describe") int describe(void) {
	output_str(describe_doc);
	return 0;
}

#define FAR (1ull << 33)

EXPORT("call") int call(void) {
	usize n;
	char *in = input(&n);
	char name[64];
	str(in, "name", name, sizeof name);
	if (eq(name, "load")) return (int)extism_load_u64(FAR);
	if (eq(name, "store")) extism_store_u64(FAR, 1);
	if (eq(name, "input")) return (int)extism_input_load_u64(n);
	if (eq(name, "inputset")) extism_input_set(FAR, 8);
	if (eq(name, "outputset")) extism_output_set(FAR, 8);
	if (eq(name, "outputlimit")) extism_output_set(extism_alloc(8), 1ull << 40);
	if (eq(name, "alloc")) return (int)extism_alloc(1ull << 40);
	if (eq(name, "kernelloop")) {
		u64 b = extism_alloc(8);
		for (;;) extism_store_u64(b, extism_load_u64(b) + 1);
	}
	__builtin_trap();
}
