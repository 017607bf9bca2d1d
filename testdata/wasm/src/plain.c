/* plain: an Extism plugin written for Extism, not for autoagent: plain
 * exported functions, no describe and no call. A sidecar naming each
 * export makes it a tool (host/ABI.md 1.7).
 *   count_vowels  input text -> {"count":N}
 *   binary        outputs two bytes that are not UTF-8
 *   fail          error_set("plain failure"), return 1
 *   wrongtype     takes a parameter: not an Extism function */
#include "guest.h"

EXPORT("count_vowels") int count_vowels(void) {
	usize n;
	char *in = input(&n);
	u64 c = 0;
	for (usize i = 0; i < n; i++) {
		char ch = in[i] | 0x20;
		if (ch == 'a' || ch == 'e' || ch == 'i' || ch == 'o' || ch == 'u') c++;
	}
	buf b = {0};
	puts_(&b, "{\"count\":");
	putu(&b, c);
	puts_(&b, "}");
	output(b.p, b.n);
	return 0;
}

EXPORT("binary") int binary(void) {
	static const char bad[] = {(char)0xff, (char)0xfe};
	output(bad, sizeof bad);
	return 0;
}

EXPORT("fail") int plain_fail(void) { return fail("plain failure"); }

EXPORT("wrongtype") int wrongtype(int x) { return x; }
