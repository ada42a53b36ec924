// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The control program and its control frame; see ctl.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "afcd_maps.h"
#include "afcd_ctl.h"
#include "afcd_ctl.skel.h"
#include "ctl.h"
#include "pins.h"

/* Run the control program on a control frame carrying *a (read back
 * into *a). Returns its answer, 0 or -errno. */
static int ctl_run(struct afcd_ctl_bpf *ctl, struct afcd_ctl_args *a)
{
	struct afcd_ctl_frame f = { .eth_proto = htons(AFCD_CTL_ETH_P) }, out;
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = &f, .data_size_in = sizeof(f),
		    .data_out = &out, .data_size_out = sizeof(out), .repeat = 1);
	int err;

	a->magic = AFCD_CTL_MAGIC;
	f.a = *a;
	err = bpf_prog_test_run_opts(bpf_program__fd(ctl->progs.afcd_ctl), &o);
	if (err)
		return errno ? -errno : err;
	if (o.retval != 2 /* TC_ACT_SHOT: handled */ || o.data_size_out < sizeof(out))
		return -EBADMSG;
	*a = out.a;
	return a->ret;
}

struct afcd_ctl_bpf *ctl_load(char *why, size_t n)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = AFCD_PIN_DIR);
	struct afcd_ctl_bpf *ctl = afcd_ctl_bpf__open_opts(&oo);

	if (!ctl) {
		snprintf(why, n, "cannot open the control object: %s", strerror(errno));
		return NULL;
	}
	if (pins_size_flow_table(ctl->maps.afcd_flows, 0)) {
		snprintf(why, n, "cannot size the control object's flow table");
		afcd_ctl_bpf__destroy(ctl);
		return NULL;
	}
	if (afcd_ctl_bpf__load(ctl)) {
		snprintf(why, n, "the kernel refuses the control program (BPF timers and "
			 "their use from tc programs need Linux >= 5.15)");
		afcd_ctl_bpf__destroy(ctl);
		return NULL;
	}
	return ctl;
}

void ctl_destroy(struct afcd_ctl_bpf *ctl)
{
	afcd_ctl_bpf__destroy(ctl);
}

int ctl_arm(struct afcd_ctl_bpf *ctl, __u32 ifindex, __u32 slot)
{
	struct afcd_ctl_args a = { .op = AFCD_CTL_ARM, .ifindex = ifindex, .slot = slot };

	return ctl_run(ctl, &a);
}

int ctl_disarm(struct afcd_ctl_bpf *ctl, __u32 slot)
{
	struct afcd_ctl_args a = { .op = AFCD_CTL_DISARM, .slot = slot };

	return ctl_run(ctl, &a);
}

int ctl_gc(struct afcd_ctl_bpf *ctl, __u32 ifindex, __u64 idle_ns, unsigned long long *deleted,
	   __u32 *crowd)
{
	struct afcd_ctl_args a = { .op = AFCD_CTL_GC, .ifindex = ifindex, .idle_ns = idle_ns };
	int err = ctl_run(ctl, &a);

	*deleted = err ? 0 : a.deleted;
	*crowd = err ? 0 : a.crowd;
	return err;
}
