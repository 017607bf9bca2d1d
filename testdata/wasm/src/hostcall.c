/* hostcall: calls a host tool through tool_call (code mode). Arguments:
 * {"tool": "NAME", "args": "JSON text"}. */
#include "guest.h"

USER("tool_call") u64 tool_call(u64 req);

EXPORT("describe") int describe(void) {
	output_str("{\"tools\":[{\"name\":\"hostcall\",\"description\":\"Calls a host tool.\","
		   "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"tool\":{\"type\":\"string\"}},\"required\":[\"tool\"]}}]}");
	return 0;
}

EXPORT("call") int call(void) {
	usize n;
	char *in = input(&n);
	char name[80];
	usize nl = str(in, "tool", name, sizeof name);
	buf req = {0};
	puts_(&req, "{\"name\":");
	putq(&req, name, nl);
	puts_(&req, ",\"arguments\":{\"city\":\"Oslo\"}}");
	usize l;
	char *res = unblock(tool_call(block(req.p, req.n)), &l);
	output(res, l);
	return 0;
}
