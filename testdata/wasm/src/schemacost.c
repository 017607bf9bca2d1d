/* schemacost: a module with no grants whose schemas make validation, which
 * the host runs outside every limit of the call, as costly as they can
 * within the bounds on a schema's size, depth and subschemas (found by
 * attacking our own sandbox: the validator the host used had no bound on
 * its work and put the value into the error of every failed branch).
 *
 *   expout       outputSchema: a recursive anyOf whose two branches both
 *                descend into the same items; the result nests arrays d
 *                deep (24) with a 1 at the bottom, so every path fails:
 *                2^d paths (a 2^d error text before; d = 20 killed the
 *                process).
 *   branchesout  outputSchema: items must match one of 4 001 consts, each
 *                item only the last; the result is 500 000 items (25 min
 *                of validation before).
 *   errout       outputSchema: an anyOf of 4 091 branches that all fail on
 *                an array of 500 000 items (each branch's error held the
 *                array: 6 GB, then a fatal error).
 *   expin        inputSchema: the recursive anyOf of expout; the arguments
 *                bring the deep array (the call is never reached).
 *
 * Expected: each call ends at once with a short error: the validation's
 * budget ("takes more than 4194304 steps ... too costly") or, for errout,
 * the first branch's failure; the host's memory stays small. */
#include "guest.h"

#define EXP "{\"$defs\":{\"n\":{\"anyOf\":[{\"type\":\"array\",\"items\":{\"$ref\":\"#/$defs/n\"}}," \
	    "{\"type\":\"array\",\"minItems\":1,\"items\":{\"$ref\":\"#/$defs/n\"}}]}}," \
	    "\"type\":\"object\",\"properties\":{\"v\":{\"$ref\":\"#/$defs/n\"}}}"
#define ANY "{\"type\":\"object\"}"

static void tool(buf *b, const char *name, const char *in, int first) {
	if (!first) puts_(b, ",");
	puts_(b, "{\"name\":\"");
	puts_(b, name);
	puts_(b, "\",\"description\":\"A hostile test tool.\",\"inputSchema\":");
	puts_(b, in);
}

EXPORT("describe") int describe(void) {
	buf b = {0};
	puts_(&b, "{\"tools\":[");
	tool(&b, "expout", ANY, 1);
	puts_(&b, ",\"outputSchema\":" EXP "}");
	tool(&b, "branchesout", ANY, 0);
	puts_(&b, ",\"outputSchema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"array\",\"items\":{\"anyOf\":[");
	for (int i = 0; i < 4000; i++) {
		puts_(&b, "{\"const\":");
		putu(&b, (u64)i + 1);
		puts_(&b, "},");
	}
	puts_(&b, "{\"const\":0}]}}}}}");
	tool(&b, "errout", ANY, 0);
	puts_(&b, ",\"outputSchema\":{\"type\":\"object\",\"properties\":{\"a\":{\"anyOf\":[");
	for (int i = 0; i < 4090; i++) puts_(&b, "{\"type\":\"string\"},");
	puts_(&b, "{\"type\":\"string\"}]}}}}");
	tool(&b, "expin", EXP, 0);
	puts_(&b, "}]}");
	output(b.p, b.n);
	return 0;
}

EXPORT("call") int call(void) {
	usize len;
	char *in = input(&len);
	char name[16];
	str(in, "name", name, sizeof name);
	buf b = {0};
	puts_(&b, "{\"content\":[{\"type\":\"text\",\"text\":\"done\"}],\"structuredContent\":");
	if (eq(name, "expout")) {
		u64 d = num(in, "d", 24);
		puts_(&b, "{\"v\":");
		for (u64 i = 0; i < d; i++) puts_(&b, "[");
		puts_(&b, "1");
		for (u64 i = 0; i < d; i++) puts_(&b, "]");
		puts_(&b, "}");
	} else if (eq(name, "branchesout") || eq(name, "errout")) {
		puts_(&b, "{\"a\":[0");
		for (int i = 1; i < 500000; i++) put(&b, ",0", 2);
		puts_(&b, "]}");
	} else {
		puts_(&b, "{}");
	}
	puts_(&b, "}");
	output(b.p, b.n);
	return 0;
}
