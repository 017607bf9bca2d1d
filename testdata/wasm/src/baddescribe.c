/* baddescribe: describe returns something that is not a describe document. */
#include "guest.h"

EXPORT("describe") int describe(void) {
	output_str("{\"tools\": \"all of them\"");
	return 0;
}

EXPORT("call") int call(void) { return 0; }
