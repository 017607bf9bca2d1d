/* bigmem: declares 128 MiB of initial memory (linked with
 * --initial-memory), more than the default limit of 64 MiB. */
#define TOOL_NAME "bigmem"
#include "hostile.h"

EXPORT("call") int call(void) { return text_result("big", 3, 0); }
