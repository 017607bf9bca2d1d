/* echo: a well-behaved Extism-ABI tool module.
 *   echo     returns its arguments as text and structured content
 *   spin     a compute-bound loop of n rounds (for the deadline benchmark)
 *   fail     returns an error result (isError), as a tool reporting failure
 *   failcode returns code 1 with error_set
 *   config   returns config_get(key) */
#include "guest.h"

static const char describe_doc[] =
	"{\"tools\":["
	"{\"name\":\"echo\",\"description\":\"Returns its arguments.\","
	"\"inputSchema\":{\"type\":\"object\"},"
	"\"annotations\":{\"readOnlyHint\":true}},"
	"{\"name\":\"spin\",\"description\":\"Runs n rounds of a xorshift generator.\","
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\",\"minimum\":0}},\"required\":[\"n\"]},"
	"\"outputSchema\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"integer\"}},\"required\":[\"x\"]}},"
	"{\"name\":\"fail\",\"description\":\"Reports a failure as an error result.\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"failcode\",\"description\":\"Returns code 1 with an error message.\",\"inputSchema\":{\"type\":\"object\"}},"
	"{\"name\":\"config\",\"description\":\"Returns a config value.\","
	"\"inputSchema\":{\"type\":\"object\",\"properties\":{\"key\":{\"type\":\"string\"}},\"required\":[\"key\"]}}"
	"]}";

EXPORT("describe") int describe(void) {
	output_str(describe_doc);
	return 0;
}

static int echo(const char *in, usize n) {
	const char *args = find(in, "arguments");
	if (!args) return fail("no arguments");
	usize alen = (usize)(in + n - args) - 2; /* drop the closing "}}" */
	buf b = {0};
	puts_(&b, "{\"content\":[{\"type\":\"text\",\"text\":");
	putq(&b, args, alen);
	puts_(&b, "}],\"structuredContent\":");
	put(&b, args, alen);
	puts_(&b, "}");
	output(b.p, b.n);
	return 0;
}

static int spin(const char *in) {
	u64 n = num(in, "n", 0);
	volatile u64 x = 88172645463325252ULL;
	for (u64 i = 0; i < n; i++) {
		u64 v = x;
		v ^= v << 13;
		v ^= v >> 7;
		v ^= v << 17;
		x = v;
	}
	buf b = {0};
	puts_(&b, "{\"content\":[{\"type\":\"text\",\"text\":\"done\"}],\"structuredContent\":{\"x\":");
	putu(&b, x & 0xfffffffffffffULL);
	puts_(&b, "}}");
	output(b.p, b.n);
	return 0;
}

EXPORT("call") int call(void) {
	usize n;
	char *in = input(&n);
	char name[64];
	str(in, "name", name, sizeof name);
	if (eq(name, "echo")) return echo(in, n);
	if (eq(name, "spin")) return spin(in);
	if (eq(name, "fail")) {
		static const char m[] = "the city was not found";
		return text_result(m, sizeof m - 1, 1);
	}
	if (eq(name, "failcode")) return fail("failcode: something went wrong");
	if (eq(name, "config")) {
		char key[128];
		usize k = str(in, "key", key, sizeof key);
		u64 off = extism_config_get(block(key, k));
		if (!off) return text_result("(unset)", 7, 0);
		usize vn;
		char *v = unblock(off, &vn);
		return text_result(v, vn, 0);
	}
	return fail("unknown tool");
}
