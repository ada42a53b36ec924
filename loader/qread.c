// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The queue as its readers take it; see qread.h. */
#include <errno.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "qread.h"

/* A zeroed buffer for one value of afcd_qpcpu per possible CPU, and their
 * count in *ncpu; NULL with errno set. */
static struct afcd_qpcpu *qpcpu_alloc(int *ncpu)
{
	struct afcd_qpcpu *pc;

	*ncpu = libbpf_num_possible_cpus();
	if (*ncpu <= 0) {
		errno = *ncpu ? -*ncpu : EINVAL;
		return NULL;
	}
	pc = calloc((size_t)*ncpu, sizeof(*pc));   /* 8-byte multiple: libbpf's stride */
	if (!pc)
		errno = ENOMEM;
	return pc;
}

int queue_read_fd(int queue_fd, int qpcpu_fd, __u32 slot, struct afcd_queue *q)
{
	int ncpu, err = 0;
	struct afcd_qpcpu *pc = qpcpu_alloc(&ncpu);

	if (!pc)
		return -errno;
	if (bpf_map_lookup_elem(queue_fd, &slot, q) || bpf_map_lookup_elem(qpcpu_fd, &slot, pc))
		err = -errno;
	else
		afcd_qpcpu_fold(q, pc, (unsigned)ncpu);
	free(pc);
	return err;
}

int qpcpu_reset_fd(int qpcpu_fd, __u32 slot)
{
	int ncpu, err;
	struct afcd_qpcpu *pc = qpcpu_alloc(&ncpu);

	if (!pc)
		return -errno;
	err = bpf_map_update_elem(qpcpu_fd, &slot, pc, BPF_ANY) ? -errno : 0;
	free(pc);
	return err;
}
