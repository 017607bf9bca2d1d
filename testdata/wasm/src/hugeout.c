/* hugeout: returns 8 MiB of output. The host must refuse it at the output
 * limit. */
#define TOOL_NAME "hugeout"
#include "hostile.h"

EXPORT("call") int call(void) {
	usize n = 8 << 20;
	u64 off = extism_alloc(n);
	extism_output_set(off, n);
	return 0;
}
