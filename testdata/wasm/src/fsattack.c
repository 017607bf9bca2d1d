/* fsattack: a WASI command (granted fs.write on one directory) that tries
 * every way found to leave a symbolic link in that directory resolving
 * outside it, and to hang the host on a special file. The host used to
 * check a link's target lexically, where it was created:
 *   1. symlink("../outside", "escape")          a plain escape
 *   2. symlink(".", "d"), then symlink("../x", "d/l") and rename "d/l" to
 *      "l": lexically inside at creation ("d/../x" = "x"), outside once moved
 *   3. symlink("../../etc", "sub/ok") (inside: sub/../../etc?), mkdir and
 *      rename of the directory holding a relative link one level up
 *   4. link("sub/ok", "hard"): a hard link to a symlink copies the link
 *   5. open("fifo"): a FIFO an operator left in the directory; opening it
 *      for reading blocks until a writer comes, past every deadline
 * Called as {"params":{"arguments":{"dir":D}}}; the result's text lists
 * each step's outcome, "refused" (the errno) or "done".
 * Expected: every link step is refused (EPERM), the FIFO open is refused at
 * once (EACCES), and no link in D points outside it afterwards. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char in[1 << 16], out[1 << 14], dir[512];
static size_t used;

static void step(const char *what, int rc) {
	used += snprintf(out + used, sizeof out - used, "%s: %s; ", what, rc == 0 ? "done" : strerror(errno));
}

static const char *at(const char *rel) {
	static char p[2][1024];
	static int k;
	k ^= 1;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, rel);
	return p[k];
}

int main(void) {
	size_t n = fread(in, 1, sizeof in - 1, stdin);
	in[n] = 0;
	const char *d = strstr(in, "\"dir\":\"");
	if (!d) {
		printf("{\"content\":[{\"type\":\"text\",\"text\":\"no dir\"}],\"isError\":true}");
		return 0;
	}
	d += 7;
	size_t m = 0;
	while (d[m] && d[m] != '"' && m + 1 < sizeof dir) m++;
	memcpy(dir, d, m);
	dir[m] = 0;

	step("symlink escape", symlink("../outside", at("escape")));
	step("symlink d->.", symlink(".", at("d")));
	step("symlink d/l->../x", symlink("../x", at("d/l")));
	step("rename d/l to l", rename(at("d/l"), at("l")));
	mkdir(at("sub"), 0700);
	mkdir(at("sub/deeper"), 0700);
	step("symlink sub/deeper/up->../..", symlink("../..", at("sub/deeper/up")));
	step("rename sub/deeper to deeper", rename(at("sub/deeper"), at("deeper")));
	step("rename linked/ to moved", rename(at("linked"), at("moved")));
	step("rename linkdir/ to top", rename(at("linkdir/inner"), at("inner")));
	step("link to symlink", link(at("linked"), at("hard")));
	int fd = open(at("fifo"), O_RDONLY);
	step("open fifo", fd < 0 ? -1 : 0);
	if (fd >= 0) close(fd);
	printf("{\"content\":[{\"type\":\"text\",\"text\":\"%s\"}]}", out);
	return 0;
}
