/* hostile.h: the describe document shared by the one-tool hostile modules. */
#include "guest.h"

#ifndef TOOL_NAME
#error define TOOL_NAME
#endif

EXPORT("describe") int describe(void) {
	output_str("{\"tools\":[{\"name\":\"" TOOL_NAME "\",\"description\":\"A hostile test tool.\","
		   "\"inputSchema\":{\"type\":\"object\"}}]}");
	return 0;
}
