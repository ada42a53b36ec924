/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_stage.h - the stages of afcd_egress (bpf/afcd.bpf.c), in the order
 * it runs them. afcd_egress_upto() runs every stage up to and including
 * its second argument, a constant, and passes the packet there:
 * afcd_egress runs them all, and tools/afcd-bench times each prefix
 * (bpf/bench_stages.bpf.c: one program stage_NAME a stage but the last)
 * to say where a packet's time goes.
 */
#ifndef AFCD_STAGE_H
#define AFCD_STAGE_H

/* FN(NAME, what the stage does), in the order of afcd_egress. The last is
 * afcd_egress entire. */
#define AFCD_STAGES(FN)							\
	FN(config, "the interface's config, namespace and queue")	\
	FN(clock,  "the clock (bpf_ktime_get_ns()), the sender's stamp, "	\
		   "the config's inputs")					\
	FN(parse,  "the headers")						\
	FN(flow,   "the keyed flow id, the flow's entry, its samples into " \
		   "the shadow buffer")						\
	FN(fair,   "the fair share now; target_i, the policer")		\
	FN(decide, "admission, the law, the EDT clock")			\
	FN(apply,  "the verdict applied: tstamp, CE")

enum afcd_stage {
#define AFCD_STAGE_ENUM_(name, what) AFCD_STAGE_##name,
	AFCD_STAGES(AFCD_STAGE_ENUM_)
#undef AFCD_STAGE_ENUM_
	AFCD_STAGE__MAX
};
#define AFCD_STAGE_ALL (AFCD_STAGE__MAX - 1)

#endif /* AFCD_STAGE_H */
