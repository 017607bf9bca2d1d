/* loop: never returns. The host must end it at the time limit. */
#define TOOL_NAME "loop"
#include "hostile.h"

EXPORT("call") int call(void) {
	volatile u64 x = 0;
	for (;;) x++;
}
