/* lazytime: a hyper-mcp plugin of the v2 interface (list_tools,
 * call_tool), after hyper-mcp's own time plugin: its "now" tool reads the
 * clock and nothing else, yet the module imports Extism's http_request,
 * as a plugin built with a PDK that references it does. The host loads it
 * without a net: grant and refuses the import's calls (issue 44 item 4).
 * Tools: now {} returns the seconds since the epoch; sync {"url"} fetches
 * url (a time server) and returns its body; retry {"url","times"} calls
 * http_request times times in a loop, counting the calls that returned, to
 * show that a refusal ends the call rather than returning to the guest. */
#include "guest.h"

ENV("http_request") u64 extism_http_request(u64 req, u64 body);
__attribute__((import_module("wasi_snapshot_preview1"), import_name("clock_time_get")))
int clock_time_get(u32 id, u64 precision, u64 *out);

static u64 request(const char *url, usize ul) {
	buf req = {0};
	puts_(&req, "{\"url\":");
	putq(&req, url, ul);
	puts_(&req, "}");
	return extism_http_request(block(req.p, req.n), 0);
}

EXPORT("list_tools") int list_tools(void) {
	output_str("{\"tools\":["
		   "{\"name\":\"now\",\"description\":\"Seconds since the epoch.\",\"inputSchema\":{\"type\":\"object\"}},"
		   "{\"name\":\"sync\",\"description\":\"Fetches the time from a server.\",\"inputSchema\":{\"type\":\"object\","
		   "\"properties\":{\"url\":{\"type\":\"string\"}},\"required\":[\"url\"]}},"
		   "{\"name\":\"retry\",\"description\":\"Fetches a URL times times.\",\"inputSchema\":{\"type\":\"object\","
		   "\"properties\":{\"url\":{\"type\":\"string\"},\"times\":{\"type\":\"integer\"}},\"required\":[\"url\",\"times\"]}}]}");
	return 0;
}

EXPORT("call_tool") int call_tool(void) {
	usize n;
	char *in = input(&n);
	char name[16], url[1024];
	str(in, "name", name, sizeof name);
	usize ul = str(in, "url", url, sizeof url);
	if (eq(name, "now")) {
		u64 ns = 0;
		clock_time_get(0, 1, &ns);
		buf b = {0};
		putu(&b, ns / 1000000000ull);
		return text_result(b.p, b.n, 0);
	}
	if (eq(name, "sync")) {
		u64 res = request(url, ul);
		usize bl = 0;
		char *body = res ? unblock(res, &bl) : "";
		return text_result(body, bl, 0);
	}
	if (eq(name, "retry")) {
		u64 times = num(in, "times", 0), done = 0;
		for (u64 i = 0; i < times; i++) {
			request(url, ul);
			done++;
		}
		buf b = {0};
		putu(&b, done);
		return text_result(b.p, b.n, 0);
	}
	return fail("unknown tool");
}
