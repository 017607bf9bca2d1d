/* kv: the key-value capability. Arguments: {"op": "get|set|delete|keys",
 * "ns": "notes" (optional), "key": "...", "value": "...", "size": N}.
 * With size, set stores N bytes of 'x' instead of value. */
#include "guest.h"

USER("kv_get") u64 kv_get(u64 ns, u64 key);
USER("kv_set") void kv_set(u64 ns, u64 key, u64 value);
USER("kv_delete") void kv_delete(u64 ns, u64 key);
USER("kv_keys") u64 kv_keys(u64 ns, u64 prefix);

EXPORT("describe") int describe(void) {
	output_str("{\"tools\":[{\"name\":\"kv\",\"description\":\"Reads and writes the key-value store.\","
		   "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"op\":{\"enum\":[\"get\",\"set\",\"delete\",\"keys\"]},"
		   "\"ns\":{\"type\":\"string\"},\"key\":{\"type\":\"string\"},\"value\":{\"type\":\"string\"},"
		   "\"size\":{\"type\":\"integer\"}},\"required\":[\"op\"]}}],"
		   "\"capabilities\":[\"kv:notes\"]}");
	return 0;
}

EXPORT("call") int call(void) {
	usize n;
	char *in = input(&n);
	char op[16], ns[80], key[600];
	char *value = bump(4096);
	str(in, "op", op, sizeof op);
	usize nl = str(in, "ns", ns, sizeof ns);
	usize kl = str(in, "key", key, sizeof key);
	usize vl = str(in, "value", value, 4096);
	u64 nso = nl ? block(ns, nl) : 0;
	if (eq(op, "set")) {
		u64 size = num(in, "size", 0);
		u64 vo;
		if (size) {
			char *big = bump(size);
			memset(big, 'x', size);
			vo = block(big, size);
		} else {
			vo = block(value, vl);
		}
		kv_set(nso, block(key, kl), vo);
		return text_result("stored", 6, 0);
	}
	if (eq(op, "get")) {
		u64 off = kv_get(nso, block(key, kl));
		if (!off) return text_result("(absent)", 8, 0);
		usize l;
		char *v = unblock(off, &l);
		return text_result(v, l, 0);
	}
	if (eq(op, "delete")) {
		kv_delete(nso, block(key, kl));
		return text_result("deleted", 7, 0);
	}
	if (eq(op, "keys")) {
		usize l;
		char *v = unblock(kv_keys(nso, kl ? block(key, kl) : 0), &l);
		return text_result(v, l, 0);
	}
	return fail("unknown op");
}
