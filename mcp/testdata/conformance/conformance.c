/*
 * conformance: a sandboxed tool module (WASI command ABI, described by
 * conformance.tool.json) offering the tools the MCP conformance suite's
 * server scenarios call, so that the suite tests `autoagent mcp serve` with
 * a real module behind it. Built by build.sh; the .wasm is committed.
 *
 * The call input is {"params":{"name":"...","arguments":{...}}} on stdin;
 * the MCP result goes to stdout.
 */
#include <stdio.h>
#include <string.h>

/* a 1x1 red PNG */
#define PNG "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
/* 10 ms of 8 kHz 8-bit mono silence, RIFF/WAVE */
#define WAV "UklGRnQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YVAAAACAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgA=="

static const struct {
	const char *name, *result;
} tools[] = {
	{"test_simple_text", "{\"content\":[{\"type\":\"text\",\"text\":\"This is a simple text response for testing.\"}]}"},
	{"test_image_content", "{\"content\":[{\"type\":\"image\",\"data\":\"" PNG "\",\"mimeType\":\"image/png\"}]}"},
	{"test_audio_content", "{\"content\":[{\"type\":\"audio\",\"data\":\"" WAV "\",\"mimeType\":\"audio/wav\"}]}"},
	{"test_error_handling", "{\"content\":[{\"type\":\"text\",\"text\":\"This tool intentionally returns an error for testing\"}],\"isError\":true}"},
	{"json_schema_2020_12_tool", "{\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]}"},
};

static char in[65536];

int main(void) {
	size_t n = fread(in, 1, sizeof in - 1, stdin);
	in[n] = 0;
	/* The names recognised hold no escaped characters: find "name":"...". */
	char *p = strstr(in, "\"name\"");
	if (!p) {
		fputs("no tool name in the call\n", stderr);
		return 1;
	}
	p += 6;
	while (*p == ' ' || *p == ':' || *p == '\t' || *p == '\n' || *p == '\r') p++;
	if (*p++ != '"') {
		fputs("malformed tool name\n", stderr);
		return 1;
	}
	char *end = strchr(p, '"');
	if (!end) {
		fputs("malformed tool name\n", stderr);
		return 1;
	}
	*end = 0;
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++) {
		if (strcmp(p, tools[i].name) == 0) {
			puts(tools[i].result);
			return 0;
		}
	}
	fprintf(stderr, "unknown tool %s\n", p);
	return 1;
}
