/* lazyinit: a module whose initialiser (a constructor, run by
 * __wasm_call_ctors) calls http_request when its config holds "url". A
 * module loads with an import it was not granted; its initialiser's call
 * is refused like any other, the instance is not made, and no snapshot is
 * taken of an initialiser that a refusal ended (issue 44 item 4). Its tool,
 * described by a sidecar, returns what the initialiser fetched. */
#include "guest.h"

ENV("http_request") u64 extism_http_request(u64 req, u64 body);

static char fetched[256];
static usize fetched_len;

__attribute__((constructor)) static void init(void) {
	u64 key = block("url", 3);
	u64 v = extism_config_get(key);
	if (!v) return;
	usize ul;
	char *url = unblock(v, &ul);
	buf req = {0};
	puts_(&req, "{\"url\":");
	putq(&req, url, ul);
	puts_(&req, "}");
	u64 res = extism_http_request(block(req.p, req.n), 0);
	if (res) {
		usize bl;
		char *body = unblock(res, &bl);
		for (fetched_len = 0; fetched_len < bl && fetched_len < sizeof fetched; fetched_len++) fetched[fetched_len] = body[fetched_len];
	}
}

EXPORT("call") int call(void) {
	usize n;
	input(&n);
	return text_result(fetched, fetched_len, 0);
}
