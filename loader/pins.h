/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pins.h - the pinned maps (AFCD_PINS in maps/afcd_maps.h) under
 * AFCD_PIN_DIR, the per-interface slots in them and the config entry
 * that claims one. Writers serialise on pins_lock().
 */
#ifndef AFCD_PINS_H
#define AFCD_PINS_H

#include <stdbool.h>
#include <linux/types.h>

#include "afcd_maps.h"

/* One descriptor per pinned map, -1 when not open. */
#define PIN_FIELD_(f, name, type, k, v) int f;
struct pins {
	AFCD_PINS(PIN_FIELD_)
};
#undef PIN_FIELD_

/* Open every pinned map and check that it is this version's (map type,
 * key and value size: pins of another ABI are refused, not adopted).
 * Returns 0, or -1 (with one line printed unless quiet) and nothing open;
 * errno is then ENOENT when a pin is missing (nothing attached), or why a
 * pin could not be opened (EACCES, ...), or EINVAL for a foreign pin. */
int pins_open(struct pins *p, bool quiet);
void pins_close(struct pins *p);

struct bpf_map;

/* Size map, an object's afcd_flows before the object loads: the pinned
 * table's entries when one is pinned, else want (0: AFCD_FLOWS_MAX).
 * 0, or -1 with one line printed when want is outside [AFCD_FLOWS_MIN,
 * AFCD_FLOWS_LIMIT] or differs from the pinned table's (nothing changed). */
int pins_size_flow_table(struct bpf_map *map, __u32 want);

/* Are the pins still the maps p holds (each path present and the same
 * map, by id)? 0, or -1 with the reason in why: someone removed a pin or
 * remounted bpffs, so that no tool can reach this loader's maps. */
int pins_check(const struct pins *p, char *why, size_t n);
/* Mode 0600 on every pin; unlink every pin and the qdisc backend's
 * struct_ops link (AFCD_QDISC_OPS_PIN) when no interface is left. */
void pins_chmod(void);
void pins_unlink(void);

/* An exclusive flock(2) on the pin directory, held from choosing a slot to
 * writing the config and from deleting a config to zeroing its slot.
 * Returns the descriptor for pins_unlock(), or -1 with the error printed.
 * Blocks while another afcd holds it (microseconds). */
int pins_lock(void);
void pins_unlock(int fd);

/* ifindex's config (found as the datapath finds it: afcd_ifslot, or a
 * scan of the slots for an ifindex beyond it): 0, or -1 (none). */
int cfg_lookup(struct pins *p, __u32 ifindex, struct afcd_config *c);
/* Does any slot hold a config? */
bool cfg_any(struct pins *p);

/* Refuse (one line, -1) when ifindex's config was written from another
 * network namespace: the same ifindex there is another interface, and the
 * pins are shared. 0 when there is no config, or it is ours, or either
 * side's namespace is unknown, or claim is set (attach --takeover) and
 * the config's loader has stopped (slot_owner()): a live one keeps it,
 * and the refusal names it. */
int cfg_check_netns(struct pins *p, __u32 ifindex, const char *dev, bool claim);
/* The same with the pins opened here; 0 when nothing is pinned. */
int check_netns(__u32 ifindex, const char *dev, bool claim);

/* Write a complete, validated config for ifindex (slot, ifindex and netns
 * cookie filled in here), claiming a slot if it has none; restarts the
 * shadow buffer when sb_size changes. 0, or -1 with the error printed.
 * The _locked form needs pins_lock() held. */
int config_write_locked(struct pins *p, __u32 ifindex, struct afcd_config *c);
int config_write(struct pins *p, __u32 ifindex, struct afcd_config *c);

/* Delete ifindex's config and zero its slot and flow state (pins_lock()
 * held). The slot's refresh timer stops at its next firing. 0 and the old
 * config in *old, or -1 when it had none. */
int config_delete_locked(struct pins *p, __u32 ifindex, struct afcd_config *old);

/* Call fn(fd, id, f, arg) for every flow-state entry of ifindex in map
 * afcd_flows (fd = p->flows), read in batches of (id, value) with
 * bpf_map_lookup_batch (Linux >= 5.6): the map's key is the flow id, the
 * interface is in the value's key. fn may delete or update the entry it
 * is given. Returns the number of entries of ifindex visited, or -errno
 * (-ENOMEM, or from the batch read) after visiting the ones read. */
typedef void (*flow_fn)(int fd, __u64 id, struct afcd_flow *f, void *arg);
long flows_each(struct pins *p, __u32 ifindex, flow_fn fn, void *arg);

/* The state an interface's slot keeps beside its config (slots.c):
 * pins_forget_flows() deletes ifindex's flow entries and slot's count
 * keys (none for a slot out of 0..AFCD_MAX_IFACES-1);
 * pins_restart_samples() starts its shadow buffer's books over (count
 * keys, the slot's histogram, every flow's m_i), as a new sb_size needs;
 * pins_hist_reset() zeroes the slot's histogram (0 or -errno);
 * pins_zero_samples() sets every flow's m_i of ifindex to 0. */
void pins_forget_flows(struct pins *p, __u32 slot, __u32 ifindex);
/* qread.h's qpcpu_reset_fd() and queue_read_fd() on the pinned maps. */
int pins_qpcpu_reset(struct pins *p, __u32 slot);
int queue_read(struct pins *p, __u32 slot, struct afcd_queue *q);
void pins_restart_samples(struct pins *p, __u32 slot, __u32 ifindex);
int pins_hist_reset(struct pins *p, __u32 slot);
void pins_zero_samples(struct pins *p, __u32 ifindex);

/* How long a slot's loader may go without a scan before it counts as
 * stopped, whatever namespace it runs in: 40 scan periods. */
#define AFCD_OWNER_STALE_NS (40 * AFCD_SCAN_PERIOD_NS)
/* Does a live loader hold config c's slot (an attach asks before it
 * claims one, so not itself)? Its PID in *pid (afcd_scan.loader_pid, as
 * the loader's own PID namespace numbers it) and the age of its last scan
 * in *age_ns (0: none). A loader of this network namespace lives while its
 * PID does (kill(pid, 0)); one of another, whose PID may be another PID
 * namespace's, while its scans are younger than AFCD_OWNER_STALE_NS or,
 * stalled (SIGSTOP), while a process of its PID named afcd runs in this
 * PID namespace. One that stopped with --keep left loader_pid 0. */
bool slot_owner(struct pins *p, const struct afcd_config *c, __u32 *pid, __u64 *age_ns);
/* slot_owner() of ifindex's config, with the pins opened here. */
bool running_loader(__u32 ifindex, __u32 *pid);

#endif /* AFCD_PINS_H */
