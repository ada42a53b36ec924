/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_stage.h - the stages of afcd_egress (bpf/afcd.bpf.c), in the order
 * it runs them. afcd_egress_upto() runs every stage up to and including
 * its second argument, a constant, and passes the packet there:
 * afcd_egress runs them all, and tools/afcd-bench times each prefix
 * (bpf/bench_stages.bpf.c) to say where a packet's time goes.
 */
#ifndef AFCD_STAGE_H
#define AFCD_STAGE_H

enum afcd_stage {
	AFCD_STAGE_CONFIG,	/* the interface's config, namespace and queue */
	AFCD_STAGE_PARSE,	/* the clock, the sender's stamp, the headers */
	AFCD_STAGE_FLOW,	/* the keyed flow id, the flow's entry, its
				 * samples into the shadow buffer */
	AFCD_STAGE_FAIR,	/* the fair share now; target_i, the policer */
	AFCD_STAGE_DECIDE,	/* admission, the law, the EDT clock */
	AFCD_STAGE_ALL,		/* the verdict applied: tstamp, CE */
};

#endif /* AFCD_STAGE_H */
