/* hostfn: calls host functions the embedding application registers
 * (host.Options.Functions), as an Extism plugin does: extism:host/user.mult
 * takes and returns numbers, app.upper an Extism memory block. Tools:
 *   mult {"a": N, "b": N}  ->  "A x B = P"
 *   upper {"s": "text"}    ->  the host's answer, as returned
 * Built with -DDESCRIBE_CALLS (hostfndescribe.wasm), its describe calls
 * app.upper, which the host refuses: describe runs with no capabilities. */
#include "guest.h"

USER("mult") u64 host_mult(u64 a, u64 b);
__attribute__((import_module("app"), import_name("upper"))) u64 host_upper(u64 text);

EXPORT("describe") int describe(void) {
#ifdef DESCRIBE_CALLS
	host_upper(block("x", 1));
#endif
	output_str("{\"tools\":["
		   "{\"name\":\"mult\",\"description\":\"Multiplies on the host.\",\"inputSchema\":{\"type\":\"object\"}},"
		   "{\"name\":\"upper\",\"description\":\"Upper-cases on the host.\",\"inputSchema\":{\"type\":\"object\"}}]}");
	return 0;
}

EXPORT("call") int call(void) {
	usize n;
	char *in = input(&n);
	char name[16];
	str(in, "name", name, sizeof name);
	buf b = {0};
	if (eq(name, "mult")) {
		u64 a = num(in, "a", 0), x = num(in, "b", 0);
		putu(&b, a);
		puts_(&b, " x ");
		putu(&b, x);
		puts_(&b, " = ");
		putu(&b, host_mult(a, x));
		return text_result(b.p, b.n, 0);
	}
	if (eq(name, "upper")) {
		char s[256];
		usize sl = str(in, "s", s, sizeof s);
		usize l;
		char *res = unblock(host_upper(block(s, sl)), &l);
		return text_result(res, l, 0);
	}
	return fail("unknown tool");
}
