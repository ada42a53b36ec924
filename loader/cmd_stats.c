// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* afcd stats DEV [-j] [--flows] [-k N] [--dt SEC]: two readings --dt
 * apart, rates between them; see cmds.h and render.h. */
#include <stdlib.h>
#include <unistd.h>

#include "cmds.h"
#include "log.h"
#include "pins.h"
#include "render.h"
#include "tc.h"
#include "snapshot.h"
#include "sys.h"

#define SOFF(f) offsetof(struct stats_opts, f)
const struct opt_def stats_opts_table[] = {
	{ "json",  'j', OPT_FLAG,    SOFF(json),  NULL,  "JSON on one line (counters under their keys in maps/afcd_maps.h)" },
	{ "flows", 'f', OPT_FLAG,    SOFF(flows), NULL,  "the flow table too, fastest first" },
	{ "top",   'k', OPT_INT_POS, SOFF(top),   "N",   "at most N flows (default 20)" },
	{ "dt",    'd', OPT_SECONDS, SOFF(dt),    "SEC", "seconds between the two readings, 0..60 (default 0.5)" },
	{ NULL }
};

int cmd_stats(int argc, char **argv)
{
	struct stats_opts o = { .top = 20, .dt = 0.5 };
	struct snapshot s0, s1;
	struct flow_row *r0 = NULL, *r1 = NULL;
	size_t n0 = 0, n1 = 0;
	const char *dev = NULL;
	struct pins p;
	__u32 ifindex;

	if (opts_parse(argc, argv, 1, stats_opts_table, &o, NULL, &dev))
		return 2;
	if (!dev) {
		pr_warn("usage: afcd stats DEV [-j] [--flows] [-k N] [--dt SEC]");
		return 2;
	}
	if (check_ifname(dev, &ifindex) || check_privileges() || pins_open(&p, false))
		return 1;
	if (cfg_check_netns(&p, ifindex, dev, false)) {
		pins_close(&p);
		return 1;
	}
	if (snapshot_read(&p, ifindex, &s0)) {
		pr_warn("%s is not configured (no afcd config for ifindex %u)", dev, ifindex);
		pins_close(&p);
		return 1;
	}
	if (o.flows)
		r0 = flows_read(&p, ifindex, &n0);
	if (o.dt > 0)
		usleep((useconds_t)(o.dt * 1e6));
	snapshot_read(&p, ifindex, &s1);
	r1 = o.flows ? flows_read(&p, ifindex, &n1) : NULL;
	flows_rate(r1, n1, r0, n0, (double)(s1.t_ns - s0.t_ns) / 1e9);
	render_stats(dev, ifindex, hook_name(ifindex), &s0, &s1, r1, n1,
		     o.flows ? n1 : count_iface_flows(&p, ifindex), &o);
	free(r0);
	free(r1);
	pins_close(&p);
	return 0;
}
