// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench_stages.bpf.c - afcd_egress cut after each of its stages, for the
 * per-stage breakdown of `make bench` (tools/afcd-bench.c). Each program
 * runs the stages of afcd.bpf.c's enum afcd_stage up to its own and passes
 * the packet (stage_apply is afcd_egress again); afcd_egress itself is in this object too, so all of them
 * share one set of maps and one config, and the difference between two
 * consecutive prefixes is what their last stage costs. Not for
 * deployment.
 */
#include "afcd.bpf.c"

/* A tc program that runs afcd_egress up to and including stage. */
#define STAGE_PROG(name, stage)					\
	SEC("tc") int name(struct __sk_buff *skb)		\
	{							\
		return afcd_egress_upto(skb, stage);		\
	}

#define STAGE_PROG_(name, what) STAGE_PROG(stage_##name, AFCD_STAGE_##name)
AFCD_STAGES(STAGE_PROG_)
