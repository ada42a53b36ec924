// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Checks of the system and clocks; see sys.h. */
#include <ctype.h>
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <linux/capability.h>
#include <unistd.h>

#include "log.h"
#include "sys.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif
#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

int check_ifname(const char *dev, __u32 *ifindex)
{
	const char *c;

	if (!dev || !*dev || strlen(dev) >= IFNAMSIZ) {
		pr_warn("interface name missing or too long");
		return -1;
	}
	for (c = dev; *c; c++)
		if (!(isalnum((unsigned char)*c) || strchr("_.-@:", *c))) {
			pr_warn("interface '%s': invalid name", dev);
			return -1;
		}
	*ifindex = if_nametoindex(dev);
	if (!*ifindex) {
		pr_warn("interface '%s' does not exist (in this network namespace)", dev);
		return -1;
	}
	return 0;
}

static bool have_cap(unsigned cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {0};

	if (syscall(SYS_capget, &h, d))
		return false;
	return d[cap / 32].effective & (1u << (cap % 32));
}

int check_privileges(void)
{
	bool sys = have_cap(CAP_SYS_ADMIN), net = have_cap(CAP_NET_ADMIN);

	if (geteuid() != 0) {
		pr_warn("needs root with CAP_NET_ADMIN and CAP_SYS_ADMIN: run it with sudo");
		return -1;
	}
	if (!sys || !net) {
		pr_warn("needs CAP_NET_ADMIN (rtnetlink) and CAP_SYS_ADMIN (to find afcd_egress "
			"among a hook's programs by id; CAP_BPF and CAP_PERFMON are not enough), "
			"lacks %s%s%s", net ? "" : "CAP_NET_ADMIN", !net && !sys ? " and " : "",
			sys ? "" : "CAP_SYS_ADMIN");
		return -1;
	}
	return 0;
}

/* Kernel BTF present? AFCD_BTF_PATH overrides the path (for tests). */
int have_btf(void)
{
	const char *p = getenv("AFCD_BTF_PATH");

	return access(p ? p : "/sys/kernel/btf/vmlinux", R_OK) == 0;
}

/* Mount bpffs on /sys/fs/bpf if it is not, and create the pin directory
 * (mode 0700). Returns 0 or -errno. */
int ensure_bpffs(const char *pin_dir)
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

__u64 netns_cookie(void)
{
	static __u64 cookie;
	static bool done;
	socklen_t len = sizeof(cookie);
	int fd;

	if (done)
		return cookie;
	done = true;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &len))
		cookie = 0;
	if (fd >= 0)
		close(fd);
	return cookie;
}


__u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}
