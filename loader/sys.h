/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * sys.h - the loader's contact with the system outside BPF: running
 * iproute2 (tc) with an argv and capturing its output, reading fields
 * from tc's JSON, and the checks done before anything is changed
 * (privileges, BTF, bpffs).
 */
#ifndef AFCD_SYS_H
#define AFCD_SYS_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

/* Run argv (no shell). Captures up to outlen-1 bytes of stdout (and
 * stderr, appended) into out when out is non-NULL. Returns the exit
 * status (0 = success), or -1 if it could not run. */
static inline int run_argv(char *const argv[], char *out, size_t outlen)
{
	int pfd[2], status;
	size_t got = 0;
	pid_t pid;

	if (out && outlen)
		out[0] = 0;
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		close(pfd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		char buf[4096];
		ssize_t n = read(pfd[0], buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (out && got + 1 < outlen) {
			size_t take = (size_t)n;

			if (take > outlen - 1 - got)
				take = outlen - 1 - got;
			memcpy(out + got, buf, take);
			got += take;
			out[got] = 0;
		}
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

#define RUN(out, outlen, ...) ({ char *const __a[] = { __VA_ARGS__, NULL }; \
				  run_argv(__a, out, outlen); })

/* Find "key": in s (up to end) and parse the number after it. */
static inline int json_u64(const char *s, const char *end, const char *key,
			   unsigned long long *v)
{
	char pat[64];
	const char *p;
	size_t plen;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	plen = strlen(pat);
	p = strstr(s, pat);
	if (!p || p + plen >= end)
		return -1;
	p += plen;
	while (*p == ' ')
		p++;
	if (*p == '"')
		p++;
	*v = strtoull(p, NULL, 0);
	return 0;
}

/* Is "key":"value" (or "key":value) present in [s, end)? */
static inline int json_has(const char *s, const char *end, const char *key, const char *val)
{
	char pat[128];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":\"%s\"", key, val);
	p = strstr(s, pat);
	if (p && p < end)
		return 1;
	snprintf(pat, sizeof(pat), "\"%s\":%s", key, val);
	p = strstr(s, pat);
	return p && p < end;
}

/* Iterate the top-level objects of a JSON array: calls fn(begin, end)
 * for each {...} at depth 1. Strings are skipped correctly enough for
 * tc's output (no escaped quotes in our fields). */
static inline void json_each_object(const char *s, void (*fn)(const char *, const char *, void *),
				    void *arg)
{
	int depth = 0, in_str = 0;
	const char *obj = NULL, *p;

	for (p = s; *p; p++) {
		if (in_str) {
			if (*p == '\\' && p[1])
				p++;
			else if (*p == '"')
				in_str = 0;
			continue;
		}
		if (*p == '"')
			in_str = 1;
		else if (*p == '{' || *p == '[') {
			if (*p == '{' && depth == 1)
				obj = p;
			depth++;
		} else if (*p == '}' || *p == ']') {
			depth--;
			if (*p == '}' && depth == 1 && obj) {
				fn(obj, p + 1, arg);
				obj = NULL;
			}
		}
	}
}

/* Kernel BTF present? AFCD_BTF_PATH overrides the path (for tests). */
static inline int have_btf(void)
{
	const char *p = getenv("AFCD_BTF_PATH");

	return access(p ? p : "/sys/kernel/btf/vmlinux", R_OK) == 0;
}

/* Mount bpffs on /sys/fs/bpf if it is not, and create the pin directory
 * (mode 0700). Returns 0 or -errno. */
static inline int ensure_bpffs(const char *pin_dir)
{
	struct statfs st;
	char path[256], *p;

	if (statfs("/sys/fs/bpf", &st) || (unsigned long)st.f_type != BPF_FS_MAGIC) {
		mkdir("/sys/fs/bpf", 0700);
		if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"))
			return -errno;
	}
	snprintf(path, sizeof(path), "%s", pin_dir);
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		mkdir(path, 0700);
		*p = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

#endif /* AFCD_SYS_H */
