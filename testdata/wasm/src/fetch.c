/* fetch: an HTTP tool through Extism's http_request. Arguments:
 * {"url": "...", "method": "GET"}. It returns the body as text, and the
 * status, the body's size and the response headers (http_headers) as
 * structured content. */
#include "guest.h"

ENV("http_request") u64 extism_http_request(u64 req, u64 body);
ENV("http_status_code") int extism_http_status_code(void);
ENV("http_headers") u64 extism_http_headers(void);

EXPORT("describe") int describe(void) {
	output_str("{\"tools\":[{\"name\":\"fetch\",\"description\":\"Fetches a URL.\","
		   "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\"},"
		   "\"method\":{\"type\":\"string\"}},\"required\":[\"url\"]},"
		   "\"annotations\":{\"openWorldHint\":true}}],"
		   "\"capabilities\":[\"net:example.com\"]}");
	return 0;
}

EXPORT("call") int call(void) {
	usize n;
	char *in = input(&n);
	char url[1024], method[16];
	usize ul = str(in, "url", url, sizeof url);
	if (!str(in, "method", method, sizeof method)) {
		method[0] = 'G', method[1] = 'E', method[2] = 'T', method[3] = 0;
	}
	buf req = {0};
	puts_(&req, "{\"url\":");
	putq(&req, url, ul);
	puts_(&req, ",\"method\":\"");
	puts_(&req, method);
	puts_(&req, "\",\"headers\":{\"x-test\":\"1\"}}");
	u64 res = extism_http_request(block(req.p, req.n), 0);
	int status = extism_http_status_code();
	usize bl = 0;
	char *body = res ? unblock(res, &bl) : "";
	buf b = {0};
	puts_(&b, "{\"content\":[{\"type\":\"text\",\"text\":");
	putq(&b, body, bl);
	puts_(&b, "}],\"structuredContent\":{\"status\":");
	putu(&b, (u64)status);
	puts_(&b, ",\"bytes\":");
	putu(&b, bl);
	puts_(&b, ",\"headers\":");
	u64 hs = extism_http_headers();
	if (hs) {
		usize hl;
		char *h = unblock(hs, &hl);
		put(&b, h, hl);
	} else {
		puts_(&b, "null");
	}
	puts_(&b, "}}");
	output(b.p, b.n);
	return 0;
}
