/* describeloop: describe never returns. Loading must fail at the describe
 * time limit instead of hanging. */
#include "guest.h"

EXPORT("describe") int describe(void) {
	volatile u64 x = 0;
	for (;;) x++;
}

EXPORT("call") int call(void) { return 0; }
