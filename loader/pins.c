// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The pinned maps, slots and configs; see pins.h. */
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
#include <bpf/libbpf.h>

#include "log.h"
#include "pins.h"
#include "qread.h"
#include "sys.h"

/* What each pin must be: its name, map type, key and value size. */
#define PIN_SPEC_(f, name, type, k, v) \
	{ name, type, sizeof(k), sizeof(v), offsetof(struct pins, f) },
static const struct pin_spec {
	const char *name;
	__u32 type, key_size, value_size;
	size_t off;
} pin_specs[] = { AFCD_PINS(PIN_SPEC_) };
#define NPINS (sizeof(pin_specs) / sizeof(pin_specs[0]))

static int *pin_fd(struct pins *p, unsigned i)
{
	return (int *)((char *)p + pin_specs[i].off);
}

static void pin_path(char *b, size_t n, unsigned i)
{
	snprintf(b, n, "%s/%s", AFCD_PIN_DIR, pin_specs[i].name);
}

void pins_close(struct pins *p)
{
	unsigned i;

	for (i = 0; i < NPINS; i++) {
		if (*pin_fd(p, i) >= 0)
			close(*pin_fd(p, i));
		*pin_fd(p, i) = -1;
	}
}

int pins_open(struct pins *p, bool quiet)
{
	unsigned i;

	for (i = 0; i < NPINS; i++)
		*pin_fd(p, i) = -1;
	for (i = 0; i < NPINS; i++) {
		const struct pin_spec *s = &pin_specs[i];
		struct bpf_map_info info = {0};
		__u32 len = sizeof(info);
		char path[256];

		pin_path(path, sizeof(path), i);
		*pin_fd(p, i) = bpf_obj_get(path);
		if (*pin_fd(p, i) < 0) {
			int err = errno;

			if (!quiet && err == ENOENT)
				pr_warn("no afcd maps pinned at %s (%s): attach first, with "
					"'afcd attach DEV rate R' or 'tc filter add dev DEV egress bpf da "
					"obj afcd.bpf.o sec tc'", path, strerror(err));
			else if (!quiet)
				pr_warn("cannot open the pinned map %s: %s", path, strerror(err));
			pins_close(p);
			errno = err;
			return -1;
		}
		if (bpf_obj_get_info_by_fd(*pin_fd(p, i), &info, &len) || info.type != s->type ||
		    info.key_size != s->key_size || info.value_size != s->value_size) {
			if (!quiet)
				pr_warn("%s is not a map of this afcd (ABI %u): type %u, key %u, value %u "
					"bytes, expected type %u, key %u, value %u; another version's "
					"pins: detach it, or remove %s", path, AFCD_ABI_VERSION,
					info.type, info.key_size, info.value_size, s->type, s->key_size,
					s->value_size, AFCD_PIN_DIR);
			pins_close(p);
			errno = EINVAL;
			return -1;
		}
	}
	return 0;
}

int pins_check(const struct pins *p, char *why, size_t n)
{
	unsigned i;

	for (i = 0; i < NPINS; i++) {
		struct bpf_map_info mine = {0}, there = {0};
		__u32 l1 = sizeof(mine), l2 = sizeof(there);
		char path[256];
		int fd, err;

		pin_path(path, sizeof(path), i);
		fd = bpf_obj_get(path);
		if (fd < 0) {
			snprintf(why, n, "its pinned map %s is gone (%s)", path, strerror(errno));
			return -1;
		}
		err = bpf_obj_get_info_by_fd(fd, &there, &l2) ||
		      bpf_obj_get_info_by_fd(*pin_fd((struct pins *)p, i), &mine, &l1);
		close(fd);
		if (err || mine.id != there.id) {
			snprintf(why, n, "%s is another map now (id %u, the loader's %u)", path,
				 there.id, mine.id);
			return -1;
		}
	}
	return 0;
}

void pins_chmod(void)
{
	unsigned i;
	char path[256];

	for (i = 0; i < NPINS; i++) {
		pin_path(path, sizeof(path), i);
		chmod(path, 0600);
	}
}

void pins_unlink(void)
{
	unsigned i;
	char path[256];

	for (i = 0; i < NPINS; i++) {
		pin_path(path, sizeof(path), i);
		unlink(path);
	}
	unlink(AFCD_QDISC_OPS_PIN);    /* the qdisc kind goes with its maps */
}


/* Delete the entries of afcd_sb_count (fd) that belong to slot. */
static unsigned long long delete_slot_keys(int fd, __u32 slot)
{
	struct afcd_sb_key k, next, *prev = NULL;
	unsigned long long n = 0;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		k = next;
		if (k.slot == slot) {
			bpf_map_delete_elem(fd, &k);
			n++;
			/* restart: the iteration order changed under us */
			prev = NULL;
			continue;
		}
		prev = &k;
	}
	return n;
}

long flows_each(struct pins *p, __u32 ifindex, flow_fn fn, void *arg)
{
	enum { CHUNK = 1024 };
	__u64 *ids = malloc(CHUNK * sizeof(*ids)), in_batch = 0, out_batch = 0;
	struct afcd_flow *vals = malloc(CHUNK * sizeof(*vals));
	bool first = true;
	long n = -ENOMEM;

	if (!ids || !vals)
		goto out;
	for (n = 0;;) {
		LIBBPF_OPTS(bpf_map_batch_opts, bo);
		__u32 count = CHUNK, i;
		int err = bpf_map_lookup_batch(p->flows, first ? NULL : &in_batch, &out_batch,
					       ids, vals, &count, &bo);

		if (err && errno != ENOENT) {
			n = -errno;
			break;
		}
		for (i = 0; i < count; i++)
			if (vals[i].key.ifindex == ifindex) {
				fn(p->flows, ids[i], &vals[i], arg);
				n++;
			}
		if (err) /* ENOENT: that was the last batch */
			break;
		in_batch = out_batch;
		first = false;
	}
out:
	free(ids);
	free(vals);
	return n;
}

static void flow_delete(int fd, __u64 id, struct afcd_flow *f, void *arg)
{
	(void)f;
	(void)arg;
	bpf_map_delete_elem(fd, &id);
}

static void flow_zero_samples(int fd, __u64 id, struct afcd_flow *f, void *arg)
{
	(void)arg;
	if (!f->m_i)
		return;
	f->m_i = 0;
	bpf_map_update_elem(fd, &id, f, BPF_EXIST);
}

/* The ring restarted (sb_size shrank): no flow of ifindex holds a sample
 * any more. The datapath decrements m_i only for samples it evicts from
 * the ring, so counts left from the old ring would never age out. */
void pins_zero_samples(struct pins *p, __u32 ifindex)
{
	flows_each(p, ifindex, flow_zero_samples, NULL);
}

/* Zero the interface's histogram of sample counts. 0 or -errno. */
int pins_hist_reset(struct pins *p, __u32 slot)
{
	static const struct afcd_sb_hist zero;

	return bpf_map_update_elem(p->hist, &slot, &zero, BPF_ANY) ? -errno : 0;
}

int pins_qpcpu_reset(struct pins *p, __u32 slot)
{
	return qpcpu_reset_fd(p->qpcpu, slot);
}

int queue_read(struct pins *p, __u32 slot, struct afcd_queue *q)
{
	return queue_read_fd(p->queue, p->qpcpu, slot, q);
}

void pins_forget_flows(struct pins *p, __u32 slot, __u32 ifindex)
{
	if (slot < AFCD_MAX_IFACES)
		delete_slot_keys(p->count, slot);
	flows_each(p, ifindex, flow_delete, NULL);
}

void pins_restart_samples(struct pins *p, __u32 slot, __u32 ifindex)
{
	delete_slot_keys(p->count, slot);
	pins_hist_reset(p, slot);
	pins_zero_samples(p, ifindex);
}

int pins_size_flow_table(struct bpf_map *map, __u32 want)
{
	struct bpf_map_info info = {0};
	__u32 len = sizeof(info), n = want ? want : AFCD_FLOWS_MAX;
	char path[256];
	int fd;

	if (want && !afcd_flow_table_ok(want)) {
		pr_warn("--flow-table %u: the flow table takes %u to %u entries", want,
			AFCD_FLOWS_MIN, AFCD_FLOWS_LIMIT);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", AFCD_PIN_DIR, bpf_map__name(map));
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			info.max_entries = 0;
		close(fd);
		if (!info.max_entries) {
			pr_warn("cannot read the pinned %s: %s", path, strerror(errno));
			return -1;
		}
		if (want && want != info.max_entries) {
			pr_warn("--flow-table %u: the flow table every interface shares is pinned "
				"with %u entries; detach every interface to change it", want,
				info.max_entries);
			return -1;
		}
		n = info.max_entries;
	}
	if (bpf_map__set_max_entries(map, n)) {
		pr_warn("cannot size the flow table to %u entries: %s", n, strerror(errno));
		return -1;
	}
	return 0;
}
