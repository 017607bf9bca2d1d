/* trap: executes `unreachable`. */
#define TOOL_NAME "trap"
#include "hostile.h"

EXPORT("call") int call(void) { __builtin_trap(); }
