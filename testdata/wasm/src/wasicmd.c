/* wasicmd: a WASI command tool module (no PDK): the call arrives on stdin,
 * the result goes to stdout. Described by wasicmd.tool.json.
 *   readfile  {"path"}          returns the file's text
 *   writefile {"path","text"}   writes text to the file
 *   symlink   {"target","path"} creates a symbolic link
 *   listdir   {"path"}          lists a directory
 *   entropy   {}                the wall clock and 8 random bytes
 *   env       {"name"}          an environment variable
 *   flood     {}                writes to stdout forever
 *   exitcode  {}                exits with status 3 after a message on stderr */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char in[1 << 16];

static const char *find(const char *key) {
	char pat[80];
	snprintf(pat, sizeof pat, "\"%s\":", key);
	const char *p = strstr(in, pat);
	return p ? p + strlen(pat) : NULL;
}

static const char *arg(const char *key, char *out, size_t cap) {
	const char *p = find(key);
	size_t n = 0;
	out[0] = 0;
	if (!p || *p != '"') return out;
	for (p++; *p && *p != '"' && n + 1 < cap; p++) out[n++] = *p;
	out[n] = 0;
	return out;
}

static void quote(const char *s, size_t n) {
	putchar('"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') printf("\\%c", c);
		else if (c < 0x20) printf("\\u%04x", c);
		else putchar(c);
	}
	putchar('"');
}

static int text(const char *s, int is_error) {
	printf("{\"content\":[{\"type\":\"text\",\"text\":");
	quote(s, strlen(s));
	printf("}]%s}", is_error ? ",\"isError\":true" : "");
	return 0;
}

static int oserr(const char *what, const char *path) {
	static char msg[1 << 14];
	snprintf(msg, sizeof msg, "%s %s: %s", what, path, strerror(errno));
	return text(msg, 1);
}

int main(void) {
	size_t n = fread(in, 1, sizeof in - 1, stdin);
	in[n] = 0;
	char name[64], buf[4096];
	static char path[1 << 13]; /* past PATH_MAX: the host refuses it, not the guest */
	arg("name", name, sizeof name);
	arg("path", path, sizeof path);
	if (!strcmp(name, "readfile")) {
		FILE *f = fopen(path, "r");
		if (!f) return oserr("open", path);
		size_t m = fread(buf, 1, sizeof buf - 1, f);
		buf[m] = 0;
		fclose(f);
		return text(buf, 0);
	}
	if (!strcmp(name, "writefile")) {
		FILE *f = fopen(path, "w");
		if (!f) return oserr("create", path);
		arg("text", buf, sizeof buf);
		fputs(buf, f);
		if (fclose(f)) return oserr("write", path);
		return text("written", 0);
	}
	if (!strcmp(name, "symlink")) {
		char target[512];
		arg("target", target, sizeof target);
		if (symlink(target, path)) return oserr("symlink", path);
		return text("linked", 0);
	}
	if (!strcmp(name, "listdir")) {
		DIR *d = opendir(path);
		if (!d) return oserr("opendir", path);
		struct dirent *e;
		buf[0] = 0;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.') continue;
			strncat(buf, e->d_name, sizeof buf - strlen(buf) - 2);
			strcat(buf, " ");
		}
		closedir(d);
		return text(buf, 0);
	}
	if (!strcmp(name, "entropy")) {
		unsigned char r[8];
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		getentropy(r, sizeof r);
		snprintf(buf, sizeof buf, "time=%lld random=%02x%02x%02x%02x%02x%02x%02x%02x", (long long)ts.tv_sec,
			 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]);
		return text(buf, 0);
	}
	if (!strcmp(name, "env")) {
		char key[128];
		arg("key", key, sizeof key);
		const char *v = getenv(key);
		return text(v ? v : "(unset)", 0);
	}
	if (!strcmp(name, "flood")) {
		for (;;) fputs("flood flood flood flood flood flood flood flood flood flood\n", stdout);
	}
	if (!strcmp(name, "exitcode")) {
		fputs("something broke\n", stderr);
		return 3;
	}
	return text("unknown tool", 1);
}
