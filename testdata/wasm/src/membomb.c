/* membomb: grows memory without end, through linear memory ("grow") or
 * through Extism memory blocks ("alloc"). The host must stop it at the
 * memory limit. */
#define TOOL_NAME "membomb"
#include "hostile.h"

EXPORT("call") int call(void) {
	usize n;
	char *in = input(&n);
	char mode[16];
	str(in, "mode", mode, sizeof mode);
	if (eq(mode, "alloc")) {
		for (;;) extism_alloc(1 << 20);
	}
	for (;;) {
		if (__builtin_wasm_memory_grow(0, 16) == (usize)-1) __builtin_trap();
	}
}
