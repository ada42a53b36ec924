/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_flowid.h - the keyed 64-bit flow id (SipHash-1-3) and the flow key's
 * comparison.
 * Pure arithmetic, as every header of afcd_law.h: compiled into the BPF
 * programs (always_inline) and into the host tests (tests/unit/test_law.c).
 */
#ifndef AFCD_FLOWID_H
#define AFCD_FLOWID_H

#include "afcd_arith.h"

/* ---- Flow id: SipHash-1-3 ------------------------------------------------
 * SipHash (J.-P. Aumasson, D. J. Bernstein, "SipHash: a fast short-input
 * PRF", INDOCRYPT 2012) with c = 1 compression and d = 3 finalisation
 * rounds: the 64-bit variant of the kernel's hsiphash() (lib/siphash.c),
 * and the hash of Rust's HashMap and of CPython since 3.11. A PRF under a
 * 128-bit secret key: whoever does not know the key cannot choose two
 * keys that collide (nor a differential that collides whatever the key)
 * better than by chance, which is what keys the flow map by a 64-bit id
 * needs. The key is the slot's afcd_queue.flow_id_key, from getrandom(2). */
#define AFCD_ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define AFCD_SIPROUND(v0, v1, v2, v3) do {                                   \
	(v0) += (v1); (v1) = AFCD_ROTL64((v1), 13); (v1) ^= (v0);           \
	(v0) = AFCD_ROTL64((v0), 32);                                        \
	(v2) += (v3); (v3) = AFCD_ROTL64((v3), 16); (v3) ^= (v2);           \
	(v0) += (v3); (v3) = AFCD_ROTL64((v3), 21); (v3) ^= (v0);           \
	(v2) += (v1); (v1) = AFCD_ROTL64((v1), 17); (v1) ^= (v2);           \
	(v2) = AFCD_ROTL64((v2), 32);                                        \
} while (0)
/* one message word, c = 1 */
#define AFCD_SIP_ABSORB(v0, v1, v2, v3, m) do {                              \
	__u64 m_ = (m);                                                      \
	(v3) ^= m_; AFCD_SIPROUND(v0, v1, v2, v3); (v0) ^= m_;               \
} while (0)

/* The 64-bit id of flow key k under the 128-bit key: exactly SipHash-1-3
 * of the key's message, the bytes after ifindex (the map is shared by every
 * interface, but each slot has its own secret key, and the entry holds the
 * full key), as the reference reads them on this host (the message words
 * little-endian; the tests compare with a byte-wise reference
 * implementation and its published vectors):
 *   family 4: proto, agg, family, pad, sport, dport, the IPv4 source and
 *             destination (16 bytes: the rest of an IPv4 key is the mapped
 *             prefix the parser always writes; 6 SipRounds);
 *   else:     proto, agg, family, pad, sport, dport, saddr, daddr (40 bytes;
 *             9 SipRounds).
 * The two lengths keep the encodings apart. The key of map afcd_flows. The
 * flow key is only 4-byte aligned, so it is read as 32-bit halves. Pure,
 * so the loader and the tests compute the same ids. */
AFCD_INLINE __u64 afcd_flow_id(const struct afcd_flow_key *k, const __u64 key[2])
{
	const __u32 *w = (const __u32 *)k;
	__u64 v0 = key[0] ^ 0x736f6d6570736575ULL, v1 = key[1] ^ 0x646f72616e646f6dULL;
	__u64 v2 = key[0] ^ 0x6c7967656e657261ULL, v3 = key[1] ^ 0x7465646279746573ULL;

	_Static_assert(sizeof(*k) == 44, "afcd_flow_id reads 11 words");
	AFCD_SIP_ABSORB(v0, v1, v2, v3, w[1] | (__u64)w[2] << 32);
	if (k->family == 4) {
		AFCD_SIP_ABSORB(v0, v1, v2, v3, w[6] | (__u64)w[10] << 32);
		AFCD_SIP_ABSORB(v0, v1, v2, v3, 16ULL << 56);
	} else {
		AFCD_SIP_ABSORB(v0, v1, v2, v3, w[3] | (__u64)w[4] << 32);
		AFCD_SIP_ABSORB(v0, v1, v2, v3, w[5] | (__u64)w[6] << 32);
		AFCD_SIP_ABSORB(v0, v1, v2, v3, w[7] | (__u64)w[8] << 32);
		AFCD_SIP_ABSORB(v0, v1, v2, v3, w[9] | (__u64)w[10] << 32);
		AFCD_SIP_ABSORB(v0, v1, v2, v3, 40ULL << 56);
	}
	v2 ^= 0xff;
	AFCD_SIPROUND(v0, v1, v2, v3);
	AFCD_SIPROUND(v0, v1, v2, v3);
	AFCD_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* The sample id of an entity (afcd_maps.h, Shadow buffer): an
 * aggregate's (k->agg != 0) is k->agg, 1..AFCD_AGG__MAX; a flow's own
 * entry's is its flow id id, which afcd_flow_get() never gives an entry
 * of its own at 0..AFCD_AGG__MAX. */
AFCD_INLINE __u64 afcd_sample_id(const struct afcd_flow_key *k, __u64 id)
{
	return k->agg ? k->agg : id;
}

/* The message afcd_flow_id() hashes, into buf (at least 40 bytes): its
 * length. For the tests and the tools that check ids. */
static inline unsigned afcd_flow_id_msg(const struct afcd_flow_key *k, __u8 *buf)
{
	const __u8 *b = (const __u8 *)k;
	unsigned i;

	for (i = 0; i < 8; i++)
		buf[i] = b[4 + i];
	if (k->family == 4) {
		for (i = 0; i < 4; i++) {
			buf[8 + i] = b[24 + i];       /* saddr[3] */
			buf[12 + i] = b[40 + i];      /* daddr[3] */
		}
		return 16;
	}
	for (i = 0; i < 32; i++)
		buf[8 + i] = b[12 + i];
	return 40;
}

/* 1 if flow keys a and b are equal (all 44 bytes; pad is always 0). */
AFCD_INLINE int afcd_flow_key_eq(const struct afcd_flow_key *a, const struct afcd_flow_key *b)
{
	const __u32 *x = (const __u32 *)a, *y = (const __u32 *)b;
	__u32 d = 0;
	int i;

	for (i = 0; i < 11; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

#endif /* AFCD_FLOWID_H */
