// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bench_stages.bpf.c - afcd_egress cut after each of its stages, for the
 * per-stage breakdown of `make bench` (tools/afcd-bench.c). Each program
 * runs the stages of afcd.bpf.c's enum afcd_stage up to its own and passes
 * the packet; afcd_egress itself is in this object too, so all of them
 * share one set of maps and one config, and the difference between two
 * consecutive prefixes is what their last stage costs. Not for
 * deployment.
 */
#include "afcd.bpf.c"

SEC("tc")
int stage_config(struct __sk_buff *skb)
{
	return afcd_egress_upto(skb, AFCD_STAGE_CONFIG);
}

SEC("tc")
int stage_parse(struct __sk_buff *skb)
{
	return afcd_egress_upto(skb, AFCD_STAGE_PARSE);
}

SEC("tc")
int stage_flow(struct __sk_buff *skb)
{
	return afcd_egress_upto(skb, AFCD_STAGE_FLOW);
}

SEC("tc")
int stage_fair(struct __sk_buff *skb)
{
	return afcd_egress_upto(skb, AFCD_STAGE_FAIR);
}

SEC("tc")
int stage_decide(struct __sk_buff *skb)
{
	return afcd_egress_upto(skb, AFCD_STAGE_DECIDE);
}
