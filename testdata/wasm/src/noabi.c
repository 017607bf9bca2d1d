/* noabi: exports neither call nor _start. */
#include "guest.h"

EXPORT("hello") int hello(void) { return 42; }
