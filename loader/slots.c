// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The interfaces' slots and configs in the pinned maps: allocation under
 * the pin directory's lock, writes, ownership and release; see pins.h. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "log.h"
#include "pins.h"
#include "sys.h"

int cfg_lookup(struct pins *p, __u32 ifindex, struct afcd_config *c)
{
	__u32 slot;

	if (!ifindex)
		return -1;
	if (ifindex < AFCD_IFSLOT_MAX) {
		if (bpf_map_lookup_elem(p->ifslot, &ifindex, &slot) || !slot--)
			return -1;
		return !bpf_map_lookup_elem(p->cfg, &slot, c) && c->ifindex == ifindex ? 0 : -1;
	}
	for (slot = 0; slot < AFCD_MAX_IFACES; slot++)
		if (!bpf_map_lookup_elem(p->cfg, &slot, c) && c->ifindex == ifindex)
			return 0;
	return -1;
}

bool cfg_any(struct pins *p)
{
	struct afcd_config c;
	__u32 slot;

	for (slot = 0; slot < AFCD_MAX_IFACES; slot++)
		if (!bpf_map_lookup_elem(p->cfg, &slot, &c) && c.ifindex)
			return true;
	return false;
}

int cfg_check_netns(struct pins *p, __u32 ifindex, const char *dev, bool claim)
{
	struct afcd_config c;
	__u64 mine = netns_cookie(), age;
	__u32 pid;

	if (cfg_lookup(p, ifindex, &c) || !c.netns_cookie || !mine || c.netns_cookie == mine)
		return 0;
	if (!claim) {
		pr_warn("ifindex %u (%s here) is configured from another network namespace "
			"(netns cookie %llu, this one %llu) that shares %s: refusing to change or "
			"show it; 'afcd attach %s ... --takeover' claims it once its loader has "
			"stopped", ifindex, dev, (unsigned long long)c.netns_cookie,
			(unsigned long long)mine, AFCD_PIN_DIR, dev);
		return -1;
	}
	if (!slot_owner(p, &c, &pid, &age))
		return 0;
	pr_warn("ifindex %u (%s here) is held by the afcd loader with PID %u (as its PID "
		"namespace numbers it) in another network namespace (netns cookie %llu), which "
		"scanned it %.1f s ago: --takeover claims an interface of another namespace only "
		"from a loader that has stopped", ifindex, dev, pid,
		(unsigned long long)c.netns_cookie, age / 1e9);
	return -1;
}

/* Zero the interface's queue, its counters' per-CPU parts, estimate, scan
 * and ring slot, mark the queue as owned by ifindex at slot (the datapath
 * checks both per packet) and give it a fresh flow-id key from
 * getrandom(2). */
static int slot_reset(struct pins *p, __u32 slot, __u32 ifindex)
{
	struct afcd_queue q = { .ifindex = ifindex, .slot = slot };
	struct afcd_est e = {0};
	struct afcd_scan sc = {0};
	void *ring;
	int err;

	if (getrandom(q.flow_id_key, sizeof(q.flow_id_key), 0) != sizeof(q.flow_id_key))
		return -errno;
	ring = calloc(1, sizeof(struct afcd_sb_ring));
	if (!ring)
		return -ENOMEM;
	err = bpf_map_update_elem(p->ring, &slot, ring, BPF_ANY);
	free(ring);
	if (!err)
		err = bpf_map_update_elem(p->est, &slot, &e, BPF_ANY);
	if (!err)
		err = bpf_map_update_elem(p->scan, &slot, &sc, BPF_ANY);
	if (!err)
		err = pins_hist_reset(p, slot);
	if (!err)
		err = pins_qpcpu_reset(p, slot);
	if (!err)
		err = bpf_map_update_elem(p->queue, &slot, &q, BPF_ANY);
	pins_forget_flows(p, slot, ifindex);
	return err;
}

/* Serialise slot allocation and release between afcd processes:
 * an exclusive flock(2) on the pin directory, held from choosing a slot to
 * writing the config, and from deleting a config to zeroing its slot. Two
 * interfaces configured at the same moment otherwise both see the same
 * lowest free slot. Returns the descriptor for pins_unlock(), or -1 with
 * the error reported. Blocks while another afcd holds it (microseconds). */
int pins_lock(void)
{
	int fd = open(AFCD_PIN_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || flock(fd, LOCK_EX)) {
		pr_warn("cannot lock %s: %s", AFCD_PIN_DIR, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

void pins_unlock(int fd)
{
	if (fd >= 0)
		close(fd);        /* releases the flock */
}

/* The slot of ifindex: its existing one, or the lowest free one. Call with
 * pins_lock() held. */
static int slot_choose(struct pins *p, __u32 ifindex, __u32 *slot, bool *existing)
{
	struct afcd_config c;
	__u32 key;

	if (!cfg_lookup(p, ifindex, &c) && c.slot < AFCD_MAX_IFACES) {
		*slot = c.slot;
		*existing = true;
		return 0;
	}
	*existing = false;
	for (key = 0; key < AFCD_MAX_IFACES; key++)
		if (!bpf_map_lookup_elem(p->cfg, &key, &c) && !c.ifindex) {
			*slot = key;
			return 0;
		}
	pr_warn("all %d interface slots are in use: detach one first", AFCD_MAX_IFACES);
	return -1;
}

/* Write a complete, validated config for ifindex, claiming a slot if it
 * has none; restarts the shadow buffer when it shrinks (samples in slots
 * past the new size would never be evicted) and keeps it when it grows
 * (afcd_sb_grow(): the head runs free, the new slots are empty). Call
 * with pins_lock() held. */
int config_write_locked(struct pins *p, __u32 ifindex, struct afcd_config *c)
{
	struct afcd_config old;
	bool existing;
	__u32 slot;
	int err;

	if (slot_choose(p, ifindex, &slot, &existing))
		return -1;
	c->slot = slot;
	c->ifindex = ifindex;
	c->netns_cookie = netns_cookie();
	if (!existing) {
		err = slot_reset(p, slot, ifindex);
		if (err) {
			pr_warn("cannot initialise slot %u: %s", slot, strerror(-err));
			return -1;
		}
	} else if (!cfg_lookup(p, ifindex, &old) && c->sb_size < old.sb_size) {
		/* the slots past the new size keep their samples: start over */
		struct afcd_queue q;
		void *ring = calloc(1, sizeof(struct afcd_sb_ring));

		if (ring) {
			bpf_map_update_elem(p->ring, &slot, ring, BPF_ANY);
			free(ring);
		}
		pins_restart_samples(p, slot, ifindex);
		/* the datapath takes no lock: its updates that land between
		 * this read and write (a few packets' counters) are lost; the
		 * ring restart is rare and by hand */
		if (!bpf_map_lookup_elem(p->queue, &slot, &q)) {
			unsigned i;

			q.n_active = 0;
			q.sb_head = 0;
			for (i = 0; i < AFCD_AGG__MAX; i++)
				q.agg[i].m_i = 0;
			bpf_map_update_elem(p->queue, &slot, &q, BPF_ANY);
		}
	}
	/* the config first, then the index that leads the datapath to it */
	err = bpf_map_update_elem(p->cfg, &slot, c, BPF_ANY);
	if (!err && ifindex < AFCD_IFSLOT_MAX) {
		__u32 v = slot + 1;

		err = bpf_map_update_elem(p->ifslot, &ifindex, &v, BPF_ANY);
	}
	if (err) {
		pr_warn("cannot write the config: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* config_write_locked() under the pin directory's lock. */
int config_write(struct pins *p, __u32 ifindex, struct afcd_config *c)
{
	int lock = pins_lock(), err;

	if (lock < 0)
		return -1;
	err = config_write_locked(p, ifindex, c);
	pins_unlock(lock);
	return err;
}

/* Is process pid, as this PID namespace numbers it, an afcd? */
static bool pid_is_afcd(__u32 pid)
{
	char path[32], comm[16] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(comm, sizeof(comm), f))
		comm[0] = 0;
	fclose(f);
	return !strcmp(comm, "afcd\n");
}

bool slot_owner(struct pins *p, const struct afcd_config *c, __u32 *pid, __u64 *age_ns)
{
	struct afcd_scan sc;

	if (c->slot >= AFCD_MAX_IFACES || bpf_map_lookup_elem(p->scan, &c->slot, &sc) ||
	    !sc.loader_pid)
		return false;
	*pid = sc.loader_pid;
	*age_ns = sc.heartbeat_ns && now_ns() > sc.heartbeat_ns ? now_ns() - sc.heartbeat_ns : 0;
	/* a loader of this network namespace runs (as a rule) in this PID
	 * namespace: its PID answers at once, alive or dead (a loader killed
	 * with SIGKILL is replaced without waiting for its scans to age) */
	if (c->netns_cookie && c->netns_cookie == netns_cookie())
		return kill((pid_t)sc.loader_pid, 0) == 0 || errno == EPERM;
	return (sc.heartbeat_ns && *age_ns < AFCD_OWNER_STALE_NS) || pid_is_afcd(sc.loader_pid);
}

bool running_loader(__u32 ifindex, __u32 *pid)
{
	struct afcd_config c;
	struct pins p;
	bool live = false;
	__u64 age;

	if (pins_open(&p, true))
		return false;
	live = !cfg_lookup(&p, ifindex, &c) && slot_owner(&p, &c, pid, &age);
	pins_close(&p);
	return live;
}

/* cfg_check_netns() with the pins opened here; 0 when nothing is pinned. */
int check_netns(__u32 ifindex, const char *dev, bool claim)
{
	struct pins p;
	int err;

	if (pins_open(&p, true))
		return 0;
	err = cfg_check_netns(&p, ifindex, dev, claim);
	pins_close(&p);
	return err;
}


int config_delete_locked(struct pins *p, __u32 ifindex, struct afcd_config *old)
{
	struct afcd_config c = {0};
	struct afcd_queue q = {0};
	struct afcd_est e = {0};
	struct afcd_scan sc = {0};
	__u32 none = 0;

	if (cfg_lookup(p, ifindex, old))
		return -1;
	/* the index first, then the config (the other way round from
	 * config_write_locked()); without its config, the slot's refresh
	 * timer stops at its next firing */
	if (ifindex < AFCD_IFSLOT_MAX)
		bpf_map_update_elem(p->ifslot, &ifindex, &none, BPF_ANY);
	if (old->slot < AFCD_MAX_IFACES) {
		bpf_map_update_elem(p->cfg, &old->slot, &c, BPF_ANY);
		bpf_map_update_elem(p->queue, &old->slot, &q, BPF_ANY);
		pins_qpcpu_reset(p, old->slot);
		bpf_map_update_elem(p->est, &old->slot, &e, BPF_ANY);
		bpf_map_update_elem(p->scan, &old->slot, &sc, BPF_ANY);
	}
	pins_forget_flows(p, old->slot, ifindex);
	return 0;
}
