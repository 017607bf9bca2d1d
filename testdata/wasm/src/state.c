/* state: counts its calls in a global, so a test sees whether two calls
 * ran in the same instance.
 *   count  adds one to the counter and returns it
 *   fail   adds one, then returns code 1
 *   trap   adds one, then executes `unreachable`
 * and how an Extism call may end, as extism/go-sdk reads it:
 *   exit0    sets its output, then proc_exit(0): a success
 *   exit3    sets an error, then proc_exit(3): a failure with that error
 *   errzero  sets an error and returns 0: a failure with that error */
#include "guest.h"

__attribute__((import_module("wasi_snapshot_preview1"), import_name("proc_exit"))) _Noreturn void proc_exit(int code);

static u64 counter;

EXPORT("describe") int describe(void) {
	output_str("{\"tools\":["
		   "{\"name\":\"count\",\"description\":\"Counts the calls this instance served.\",\"inputSchema\":{\"type\":\"object\"}},"
		   "{\"name\":\"fail\",\"description\":\"Counts, then fails.\",\"inputSchema\":{\"type\":\"object\"}},"
		   "{\"name\":\"trap\",\"description\":\"Counts, then crashes.\",\"inputSchema\":{\"type\":\"object\"}},"
		   "{\"name\":\"exit0\",\"description\":\"Answers, then exits with status 0.\",\"inputSchema\":{\"type\":\"object\"}},"
		   "{\"name\":\"exit3\",\"description\":\"Sets an error, then exits with status 3.\",\"inputSchema\":{\"type\":\"object\"}},"
		   "{\"name\":\"errzero\",\"description\":\"Sets an error and returns 0.\",\"inputSchema\":{\"type\":\"object\"}}"
		   "]}");
	return 0;
}

EXPORT("call") int call(void) {
	usize n;
	char *in = input(&n);
	char name[16];
	str(in, "name", name, sizeof name);
	counter++;
	if (eq(name, "fail")) return fail("failed on purpose");
	if (eq(name, "trap")) __builtin_trap();
	if (eq(name, "exit0")) {
		static const char m[] = "answered before exiting";
		text_result(m, sizeof m - 1, 0);
		proc_exit(0);
	}
	if (eq(name, "exit3")) {
		static const char m[] = "exit3: gave up";
		extism_error_set(block(m, sizeof m - 1));
		proc_exit(3);
	}
	if (eq(name, "errzero")) {
		static const char m[] = "errzero: failed but returned 0";
		extism_error_set(block(m, sizeof m - 1));
		return 0;
	}
	buf b = {0};
	putu(&b, counter);
	return text_result(b.p, b.n, 0);
}
