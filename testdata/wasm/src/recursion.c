/* recursion: recurses without end through an indirect call (so the
 * compiler can turn it into neither a loop nor a tail call). The host must
 * survive the wasm stack overflow. */
#define TOOL_NAME "recursion"
#include "hostile.h"

static u64 down(u64 n);
static u64 (*volatile next)(u64) = down;

static u64 down(u64 n) { return next(n + 1) * 3 + n; }

EXPORT("call") int call(void) { return (int)next(0); }
