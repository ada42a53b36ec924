// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The qdisc backend's struct_ops registration; see qdisc_ops.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "afcd_maps.h"
#include "log.h"
#include "pins.h"
#include "qdisc_ops.h"

/* build/afcd_qdisc.bpf.o, embedded (the Makefile names it) */
__asm__(".pushsection .rodata\n"
	".balign 8\n"
	"afcd_qdisc_obj:\n"
	".incbin \"" AFCD_QDISC_OBJ "\"\n"
	"afcd_qdisc_obj_end:\n"
	".popsection\n");
extern const char afcd_qdisc_obj[], afcd_qdisc_obj_end[];

bool qdisc_ops_available(char *why, size_t n)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool ok;

	if (!btf) {
		snprintf(why, n, "the kernel's BTF cannot be read (%s)", strerror(errno));
		return false;
	}
	/* the value type the kernel registers for every struct_ops kind
	 * (bpf_struct_ops_<name>), present when net/sched/bpf_qdisc.c is */
	ok = btf__find_by_name_kind(btf, "bpf_struct_ops_Qdisc_ops", BTF_KIND_STRUCT) > 0;
	btf__free(btf);
	if (!ok)
		snprintf(why, n, "this kernel has no BPF qdiscs (they need Linux >= 6.16 with "
			 "CONFIG_NET_SCH_BPF=y; Debian enables it from 6.17): use --backend edt");
	return ok;
}

/* Is the pin a live struct_ops link? */
static bool link_pinned(void)
{
	struct bpf_link_info info = {0};
	__u32 len = sizeof(info);
	int fd = bpf_obj_get(AFCD_QDISC_OPS_PIN);
	bool ok;

	if (fd < 0)
		return false;
	ok = !bpf_link_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_STRUCT_OPS;
	close(fd);
	return ok;
}

int qdisc_ops_ensure(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = AFCD_PIN_DIR,
		    .object_name = "afcd_qdisc");
	struct bpf_object *obj;
	struct bpf_link *link;
	struct bpf_map *ops;
	int err;

	if (link_pinned())
		return 0;
	unlink(AFCD_QDISC_OPS_PIN);    /* not a struct_ops link: stale */
	obj = bpf_object__open_mem(afcd_qdisc_obj, (size_t)(afcd_qdisc_obj_end - afcd_qdisc_obj),
				   &oo);
	if (!obj) {
		pr_warn("cannot open the qdisc object: %s", strerror(errno));
		return -1;
	}
	if (pins_size_flow_table(bpf_object__find_map_by_name(obj, "afcd_flows"), 0)) {
		bpf_object__close(obj);
		return -1;
	}
	ops = bpf_object__find_map_by_name(obj, "afcd");
	/* a real link, which can be pinned (BPF_F_LINK; the object's
	 * section is .struct_ops, see bpf/afcd_qdisc.bpf.c) */
	if (!ops || bpf_map__set_map_flags(ops, bpf_map__map_flags(ops) | BPF_F_LINK) ||
	    bpf_object__load(obj)) {
		pr_warn("cannot load the qdisc object (see libbpf's messages with -v); pinned maps "
			"of an incompatible version? remove them with 'afcd detach DEV'");
		goto fail;
	}
	link = bpf_map__attach_struct_ops(ops);
	if (!link) {
		err = errno;
		if (err == EEXIST)
			pr_warn("a qdisc named afcd is registered already, but not through %s (by "
				"hand with bpftool?): unregister it first ('bpftool struct_ops "
				"unregister name afcd')", AFCD_QDISC_OPS_PIN);
		else
			pr_warn("cannot register the qdisc afcd: %s", strerror(err));
		goto fail;
	}
	err = bpf_link__pin(link, AFCD_QDISC_OPS_PIN);
	if (err)
		pr_warn("cannot pin the qdisc's link at %s: %s", AFCD_QDISC_OPS_PIN,
			strerror(-err));
	bpf_link__destroy(link);       /* the pin holds the registration */
	bpf_object__close(obj);
	return err ? -1 : 0;
fail:
	bpf_object__close(obj);
	return -1;
}
