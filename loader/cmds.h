/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cmds.h - the commands of afcd(8), one file each, and their option
 * tables (main.c builds the dispatch and the usage from them). Each
 * command gets argv from its own name on (argv[0] = "attach", ...) and
 * returns the exit status: 0, 1 (refused or failed, one line printed)
 * or 2 (usage).
 */
#ifndef AFCD_CMDS_H
#define AFCD_CMDS_H

#include <stdbool.h>
#include <linux/types.h>

#include "opts.h"

/* afcd attach's loader options (attach_opts is their table). */
struct run_opts {
	bool install_fq, skip_fq_check, keep, takeover;
	int prom_port;          /* 0: no /metrics */
	const char *prom_addr;  /* default 127.0.0.1 */
	const char *config_file;
	double duration_s;      /* 0: until a signal */
	__u64 gc_idle_ns;       /* default 10 s */
	int refresh;            /* enum refresh_mode */
	int hook;               /* enum tc_hook: --attach */
	int backend;            /* enum afcd_backend: --backend */
	int flow_table;         /* --flow-table: entries; 0: the pinned table's,
				 * else AFCD_FLOWS_MAX */
};

/* Where the drop law runs (afcd attach --backend; cmd_attach.c names
 * them in this order): the EDT program on the egress hook over sch_fq,
 * or the BPF qdisc afcd as the root qdisc (AFCD_F_QDISC). */
enum afcd_backend { BACKEND_EDT = 0, BACKEND_QDISC };

extern const struct opt_def attach_opts[], stats_opts_table[];

/* The command table (main.c): the dispatch, the usage, `afcd params`,
 * the manual pages and the completion are generated from it. */
struct command {
	const char *name, *synopsis, *help;
	int (*fn)(int argc, char **argv);
	const struct opt_def *opts;   /* NULL: no options */
};
extern const struct command commands[];
extern const size_t ncommands;

/* afcd completion bash, afcd manpage afcd.8|afcd.conf.5 (doc.c) */
int cmd_completion(int argc, char **argv);
int cmd_manpage(int argc, char **argv);

int cmd_attach(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_detach(int argc, char **argv);

/* Remove everything afcd put on DEV (the clsact filter or tcx link, the
 * config and slot,
 * the fq it installed, clsact when nothing else uses it); unpin when no
 * interface is left. Prints "detached" (pr_info). */
int detach_dev(const char *dev, __u32 ifindex);

#endif /* AFCD_CMDS_H */
