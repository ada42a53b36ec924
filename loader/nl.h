/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * nl.h - the loader's rtnetlink with libmnl, shared by tc.c (the egress
 * hook) and qdisc.c (the root qdisc): a tc request, one round trip, and
 * the attribute tables of a reply. Not a public interface of the loader.
 */
#ifndef AFCD_NL_H
#define AFCD_NL_H

#include <stdbool.h>
#include <libmnl/libmnl.h>
#include <linux/types.h>

/* tb[type] = the attribute of the tcmsg reply nlh, for type <= TCA_MAX. */
void parse_tca(const struct nlmsghdr *nlh, const struct nlattr **tb);

/* tb[type] = the attribute in nest, for type <= max. */
void parse_nested(const struct nlattr *nest, const struct nlattr **tb, unsigned max);

/* A tc request in buf: header, struct tcmsg for ifindex and parent. */
struct nlmsghdr *tc_request(char *buf, __u16 type, __u16 flags, __u32 ifindex, __u32 parent);

/* Send one request and run cb on every answer (a dump's messages, or the
 * ack). 0, or -errno (the kernel's error for a request that failed). */
int nl_talk(struct nlmsghdr *nlh, mnl_cb_t cb, void *data);

/* Does ifindex have a clsact qdisc (qdisc.c)? true also when the dump
 * fails (the caller's delete then tells). */
bool tc_has_clsact(__u32 ifindex);

#endif /* AFCD_NL_H */
