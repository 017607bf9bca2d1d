/* state: counts its calls in a global, so a test sees whether two calls
 * ran in the same instance.
 *   count  adds one to the counter and returns it
 *   fail   adds one, then returns code 1
 *   trap   adds one, then executes `unreachable` */
#include "guest.h"

static u64 counter;

EXPORT("describe") int describe(void) {
	output_str("{\"tools\":["
		   "{\"name\":\"count\",\"description\":\"Counts the calls this instance served.\",\"inputSchema\":{\"type\":\"object\"}},"
		   "{\"name\":\"fail\",\"description\":\"Counts, then fails.\",\"inputSchema\":{\"type\":\"object\"}},"
		   "{\"name\":\"trap\",\"description\":\"Counts, then crashes.\",\"inputSchema\":{\"type\":\"object\"}}"
		   "]}");
	return 0;
}

EXPORT("call") int call(void) {
	usize n;
	char *in = input(&n);
	char name[16];
	str(in, "name", name, sizeof name);
	counter++;
	if (eq(name, "fail")) return fail("failed on purpose");
	if (eq(name, "trap")) __builtin_trap();
	buf b = {0};
	putu(&b, counter);
	return text_result(b.p, b.n, 0);
}
