/* compute: compute-bound tools for the deadline benchmarks and tests.
 *   spin  n rounds of a xorshift generator in one loop (loop-heavy)
 *   fib   the n-th Fibonacci number by naive recursion (call-heavy: its
 *         hot path has calls and no loop) */
#include "guest.h"

EXPORT("describe") int describe(void) {
	output_str("{\"tools\":["
		   "{\"name\":\"spin\",\"description\":\"Runs n rounds of a xorshift generator.\","
		   "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":0}},\"required\":[\"n\"]}},"
		   "{\"name\":\"fib\",\"description\":\"Computes a Fibonacci number by naive recursion.\","
		   "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":0}},\"required\":[\"n\"]}}"
		   "]}");
	return 0;
}

/* fib is kept out of line and not turned into a loop: it is the call-heavy
 * workload. */
__attribute__((noinline)) static u64 fib(u64 n) {
	if (n < 2) return n;
	u64 a = fib(n - 1);
	__asm__ volatile("" : : : "memory");
	return a + fib(n - 2);
}

static u64 spin(u64 n) {
	volatile u64 x = 88172645463325252ULL;
	for (u64 i = 0; i < n; i++) {
		u64 v = x;
		v ^= v << 13;
		v ^= v >> 7;
		v ^= v << 17;
		x = v;
	}
	return x;
}

EXPORT("call") int call(void) {
	usize n;
	char *in = input(&n);
	char name[16];
	str(in, "name", name, sizeof name);
	u64 arg = num(in, "n", 0), r;
	if (eq(name, "spin")) {
		r = spin(arg);
	} else if (eq(name, "fib")) {
		r = fib(arg);
	} else {
		return fail("unknown tool");
	}
	buf b = {0};
	puts_(&b, "{\"content\":[{\"type\":\"text\",\"text\":\"");
	putu(&b, r & 0xfffffffffffffULL);
	puts_(&b, "\"}]}");
	output(b.p, b.n);
	return 0;
}
