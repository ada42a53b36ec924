// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* afcd set DEV [param value]...: change a running instance's config, or
 * configure a filter attached by hand; see cmds.h. */
#include "cmds.h"
#include "log.h"
#include "params.h"
#include "pins.h"
#include "sys.h"

int cmd_set(int argc, char **argv)
{
	struct params given = {0}, full;
	struct afcd_config cur;
	char err[256];
	struct pins p;
	__u32 ifindex;
	bool exists;

	if (argc < 2) {
		pr_warn("usage: afcd set DEV [param value]...");
		return 2;
	}
	if (check_ifname(argv[1], &ifindex) || opts_parse(argc, argv, 2, NULL, NULL, &given, NULL))
		return 1;
	if (check_privileges() || pins_open(&p, false))
		return 1;
	if (cfg_check_netns(&p, ifindex, argv[1], false)) {
		pins_close(&p);
		return 1;
	}
	exists = !cfg_lookup(&p, ifindex, &cur);
	if (exists) {
		full = params_from_config(&cur);
		/* a new rate without a new sample_bytes re-derives it */
		if (param_given(&given, "rate") || param_given(&given, "window") ||
		    param_given(&given, "sb_size"))
			full.set &= ~(1ULL << param_index("sample_bytes"));
		if (param_given(&given, "limit"))
			full.set &= ~(1ULL << param_index("horizon"));
		params_overlay(&full, &given);
	} else {
		full = given;
	}
	params_complete(&full);
	if (exists) {
		full.c.flags = (full.c.flags & ~AFCD_F_ATTACH_FLAGS) |
			       (cur.flags & AFCD_F_ATTACH_FLAGS);
		/* the loader keeps deriving sample_bytes from the measured
		 * link rate unless this gives one or a rate */
		if ((cur.flags & AFCD_F_SAMPLE_AUTO) && !full.c.rate_bps &&
		    !param_given(&given, "sample_bytes"))
			full.c.flags |= AFCD_F_SAMPLE_AUTO;
	}
	if (params_validate(&full, err, sizeof(err))) {
		pr_warn("%s", err);
		pins_close(&p);
		return 1;
	}
	if (config_write(&p, ifindex, &full.c)) {
		pins_close(&p);
		return 1;
	}
	pins_close(&p);
	return 0;
}
