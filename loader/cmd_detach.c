// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* afcd detach DEV; see cmds.h. */
#include <errno.h>
#include <bpf/bpf.h>

#include "cmds.h"
#include "log.h"
#include "pins.h"
#include "sys.h"
#include "tc.h"

int detach_dev(const char *dev, __u32 ifindex)
{
	struct afcd_config c;
	struct pins p;
	bool have_pins = !pins_open(&p, true), had_cfg = false;
	int lock;

	/* pins that exist but cannot be read: removing the program would leave
	 * its config and a loader refreshing nothing, so change nothing */
	if (!have_pins && errno != ENOENT && errno != EINVAL) {
		pr_warn("cannot read the afcd pins under %s (%s): nothing detached from %s; run "
			"as the user that attached it, with CAP_DAC_OVERRIDE, or fix the pins' "
			"permissions", AFCD_PIN_DIR, strerror(errno), dev);
		return 1;
	}
	/* the program and its config go under one lock: a loader that finds
	 * its program gone looks again under the lock, and then sees a
	 * detach, not a program removed by hand */
	lock = have_pins ? pins_lock() : -1;
	tc_detach_filters(ifindex, dev);
	tcx_detach(ifindex, dev);
	afcd_qdisc_remove(ifindex);
	/* a config of this ifindex written from another namespace is
	 * another interface's (a loader evicted by a --takeover from there
	 * stops through here): only this namespace's goes */
	if (have_pins && !cfg_lookup(&p, ifindex, &c) && c.netns_cookie && netns_cookie() &&
	    c.netns_cookie != netns_cookie())
		pr_info("%s: ifindex %u's config is another network namespace's: left alone", dev,
			ifindex);
	else if (have_pins && !config_delete_locked(&p, ifindex, &c)) {
		had_cfg = true;
		if (c.flags & AFCD_F_FQ_INSTALLED)
			fq_remove(ifindex);
	}
	tc_remove_clsact_if_unused(ifindex);
	if (have_pins) {
		if (!cfg_any(&p))
			pins_unlink();   /* no interface left (still locked: no attach in between) */
		pins_close(&p);
	}
	pins_unlock(lock);
	pr_info("detached from %s%s", dev, had_cfg ? "" : " (it had no afcd config)");
	return 0;
}

int cmd_detach(int argc, char **argv)
{
	__u32 ifindex;

	if (argc != 2) {
		pr_warn("usage: afcd detach DEV");
		return 2;
	}
	if (check_ifname(argv[1], &ifindex) || check_privileges() ||
	    check_netns(ifindex, argv[1], false))
		return 1;
	return detach_dev(argv[1], ifindex);
}
