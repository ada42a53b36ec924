// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* afcd attach's options (struct run_opts, cmds.h): the table the parser,
 * the usage, the manual and the completion take them from. */
#include <stddef.h>

#include "cmds.h"

#define ROFF(f) offsetof(struct run_opts, f)
/* in the order of enum refresh_mode and enum tc_hook */
static const char *const refresh_names[] = { "auto", "kernel", "user", NULL };
static const char *const hook_names[] = { "auto", "tcx", "clsact", NULL };
static const char *const backend_names[] = { "edt", "qdisc", NULL };

const struct opt_def attach_opts[] = {
	{ "backend", 0, OPT_CHOICE, ROFF(backend), "B",
	  "edt: a tc egress program stamps departure times that sch_fq enforces (default); "
	  "qdisc: the BPF qdisc afcd as the root qdisc, the drop law at dequeue on the true "
	  "sojourn (Linux >= 6.16 with CONFIG_NET_SCH_BPF)", backend_names },
	{ "attach", 0, OPT_CHOICE, ROFF(hook), "HOOK",
	  "where to attach afcd_egress (--backend qdisc: the CE marks the qdisc owes): tcx "
	  "(Linux >= 6.6, a libbpf >= 1.3 build), clsact, or auto (tcx where it can, "
	  "default)", hook_names },
	{ "install-fq", 0, OPT_FLAG, ROFF(install_fq), NULL,
	  "install a root fq sized for the program if missing (--backend qdisc installs "
	  "its own root qdisc: nothing to add)" },
	{ "skip-fq-check", 0, OPT_FLAG, ROFF(skip_fq_check), NULL,
	  "attach without sch_fq (tests; tstamps not enforced)" },
	{ "keep", 0, OPT_FLAG, ROFF(keep), NULL,
	  "on exit, leave the program, config and pins in place" },
	{ "takeover", 0, OPT_FLAG, ROFF(takeover), NULL,
	  "take the interface from a running loader of this namespace, which then stops and "
	  "leaves everything; from another namespace's only once its loader has stopped" },
	{ "prometheus", 0, OPT_PORT, ROFF(prom_port), "PORT", "serve /metrics on PORT (default off)" },
	{ "prometheus-addr", 0, OPT_STR, ROFF(prom_addr), "ADDR",
	  "address to listen on (default 127.0.0.1)" },
	{ "config", 'c', OPT_STR, ROFF(config_file), "FILE",
	  "read parameters from FILE (the command line overrides it)" },
	{ "duration", 0, OPT_TIME_S, ROFF(duration_s), "T", "stop (and clean up) after T" },
	{ "gc-idle", 0, OPT_TIME, ROFF(gc_idle_ns), "T", "delete flow state idle for T (default 10s)" },
	{ "flow-table", 0, OPT_INT_POS, ROFF(flow_table), "N",
	  "entries of the flow table every interface shares (default 65536; 1024-16777216, "
	  "248 bytes of kernel memory each); set by the first loader: while any interface "
	  "uses it, only its own size is accepted" },
	{ "refresh", 0, OPT_CHOICE, ROFF(refresh), "MODE",
	  "who runs the refresh step: kernel (a BPF timer, Linux >= 5.15), user (this "
	  "process), auto (kernel if it can, default)", refresh_names },
	{ "quiet", 'q', OPT_QUIET, 0, NULL, "only errors" },
	{ "verbose", 'v', OPT_VERBOSE, 0, NULL, "libbpf's messages too" },
	{ NULL }
};
