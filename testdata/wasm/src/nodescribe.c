/* nodescribe: exports call but no describe, and ships no sidecar. */
#include "guest.h"

EXPORT("call") int call(void) { return text_result("hi", 2, 0); }
