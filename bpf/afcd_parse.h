/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * afcd_parse.h - packet parser: Ethernet, up to two VLAN tags (802.1Q,
 * 802.1ad), IPv4 (options skipped, fragments detected) and IPv6 (up to
 * AFCD_IPV6_EXT_MAX extension headers skipped, fragments detected), then
 * the first four bytes of TCP/UDP/UDP-Lite/SCTP/DCCP for the ports.
 *
 * One parser over offsets with a bounds check before every read, for two
 * windows on the frame: direct packet access (the tc program) and a copy
 * of its first bytes (the qdisc backend), so that the same code satisfies
 * the BPF verifier in both and runs on the host over a plain buffer
 * (tests/unit/test_law.c fuzzes both and compares them). It never writes
 * to the packet.
 */
#ifndef AFCD_PARSE_H
#define AFCD_PARSE_H

#include "afcd_maps.h"

#ifndef AFCD_INLINE
#define AFCD_INLINE static inline __attribute__((always_inline))
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define AFCD_BE16(x) ((__u16)__builtin_bswap16((__u16)(x)))
#else
#define AFCD_BE16(x) ((__u16)(x))
#endif

#define AFCD_ETH_HLEN        14
#define AFCD_ETH_P_IP        0x0800
#define AFCD_ETH_P_IPV6      0x86DD
#define AFCD_ETH_P_8021Q     0x8100
#define AFCD_ETH_P_8021AD    0x88A8
#define AFCD_VLAN_MAX        2
#define AFCD_IPV6_EXT_MAX    15   /* the kernel flow dissector's MAX_FLOW_DISSECT_HDRS */

#define AFCD_IPPROTO_HOPOPTS  0
#define AFCD_IPPROTO_TCP      6
#define AFCD_IPPROTO_UDP      17
#define AFCD_IPPROTO_ROUTING  43
#define AFCD_IPPROTO_FRAGMENT 44
#define AFCD_IPPROTO_AH       51
#define AFCD_IPPROTO_DSTOPTS  60
#define AFCD_IPPROTO_DCCP     33
#define AFCD_IPPROTO_SCTP     132
#define AFCD_IPPROTO_UDPLITE  136

enum afcd_parse_status {
	AFCD_P_IP = 0,     /* key filled, eligible for the AQM */
	AFCD_P_NON_IP,     /* not IPv4/IPv6 (ARP, LLDP, ...) */
	AFCD_P_MALFORMED,  /* IP but truncated or inconsistent headers */
};

struct afcd_pkt {
	struct afcd_flow_key key; /* ifindex left 0: the caller sets it */
	__u16 l3_off;   /* offset of the IP header from data, bytes */
	__u8  family;   /* 4 or 6, 0 when not IP */
	__u8  ecn;      /* ECN field of the IP header: 0 Not-ECT, 1/2 ECT, 3 CE */
	__u8  fragment; /* 1 for any IP fragment (ports are then 0) */
	__u8  pad[3];
};

/* The largest copy afcd_parse_copy() reads (the qdisc backend's buffer):
 * headers beyond it are not followed (the frame is then malformed). */
#define AFCD_PARSE_COPY_MAX 256

/* n bytes at offset off of the frame, or NULL where the frame has fewer.
 * copy 0: [base, end) by direct packet access, bounded by pointer
 * comparisons (which the verifier turns into a packet range); copy 1:
 * base is a buffer of AFCD_PARSE_COPY_MAX bytes holding the first len
 * bytes of the frame, bounded by offsets (the verifier's range on off).
 * copy is a constant after inlining: each caller has one mode. */
AFCD_INLINE const __u8 *afcd_at(const __u8 *base, const __u8 *end, __u32 len, int copy,
				__u32 off, __u32 n)
{
	if (copy) {
		if (off > AFCD_PARSE_COPY_MAX - n || off + n > len)
			return 0;
		return base + off;
	}
	if (base + off + n > end)
		return 0;
	return base + off;
}

/* A header parsed, the parser goes on at *off with the protocol *l4. */
#define AFCD_PARSE_MORE (-1)

/* The IPv4 header at *off: the key's addresses (IPv4-mapped) and
 * protocol, the ECN field. AFCD_PARSE_MORE (*off past it, *l4 its
 * protocol), AFCD_P_IP for a fragment (no ports to read), or
 * AFCD_P_MALFORMED. */
AFCD_INLINE int afcd_parse_ipv4(const __u8 *base, const __u8 *end, __u32 len, int copy,
				__u32 *off, __u8 *l4, struct afcd_pkt *p)
{
	const __u8 *h;
	__u32 ihl;
	__u16 frag;

	p->family = 4;
	p->key.family = 4;
	h = afcd_at(base, end, len, copy, *off, 20);
	if (!h)
		return AFCD_P_MALFORMED;
	if ((h[0] >> 4) != 4)
		return AFCD_P_MALFORMED;
	ihl = (__u32)(h[0] & 0x0f) * 4;
	if (ihl < 20)
		return AFCD_P_MALFORMED;
	p->ecn = h[1] & 3;
	frag = AFCD_BE16(*(const __u16 *)(h + 6));
	*l4 = h[9];
	p->key.proto = *l4;
	/* IPv4-mapped IPv6 (RFC 4291 2.5.5.2): 0:0:0:0:0:ffff:a.b.c.d */
	((__u8 *)p->key.saddr)[10] = 0xff;
	((__u8 *)p->key.saddr)[11] = 0xff;
	((__u8 *)p->key.daddr)[10] = 0xff;
	((__u8 *)p->key.daddr)[11] = 0xff;
	p->key.saddr[3] = *(const __u32 *)(h + 12);
	p->key.daddr[3] = *(const __u32 *)(h + 16);
	if (frag & 0x3fff) { /* MF set or offset non-zero */
		p->fragment = 1;
		return AFCD_P_IP;
	}
	*off += ihl;
	return AFCD_PARSE_MORE;
}

/* Is l4 an IPv6 extension header the parser follows? */
AFCD_INLINE int afcd_ipv6_ext(__u8 l4)
{
	return l4 == AFCD_IPPROTO_HOPOPTS || l4 == AFCD_IPPROTO_ROUTING ||
	       l4 == AFCD_IPPROTO_DSTOPTS || l4 == AFCD_IPPROTO_AH ||
	       l4 == AFCD_IPPROTO_FRAGMENT;
}

/* The IPv6 header at *off and up to AFCD_IPV6_EXT_MAX extension headers:
 * the key's addresses and protocol, the ECN field. As afcd_parse_ipv4();
 * a longer chain of extension headers is AFCD_P_MALFORMED. */
AFCD_INLINE int afcd_parse_ipv6(const __u8 *base, const __u8 *end, __u32 len, int copy,
				__u32 *off, __u8 *l4, struct afcd_pkt *p)
{
	const __u8 *h;
	int i;

	p->family = 6;
	p->key.family = 6;
	h = afcd_at(base, end, len, copy, *off, 40);
	if (!h)
		return AFCD_P_MALFORMED;
	if ((h[0] >> 4) != 6)
		return AFCD_P_MALFORMED;
	p->ecn = (h[1] >> 4) & 3;
	*l4 = h[6];
	__builtin_memcpy(p->key.saddr, h + 8, 16);
	__builtin_memcpy(p->key.daddr, h + 24, 16);
	*off += 40;

#pragma unroll
	for (i = 0; i < AFCD_IPV6_EXT_MAX; i++) {
		if (!afcd_ipv6_ext(*l4))
			break;
		h = afcd_at(base, end, len, copy, *off, 8);
		if (!h)
			return AFCD_P_MALFORMED;
		if (*l4 == AFCD_IPPROTO_FRAGMENT) {
			*l4 = h[0];
			/* offset (13 bits) or M flag: a fragment */
			if (AFCD_BE16(*(const __u16 *)(h + 2)) & 0xfff9) {
				p->key.proto = *l4;
				p->fragment = 1;
				return AFCD_P_IP;
			}
			*off += 8; /* atomic fragment: keep parsing */
		} else if (*l4 == AFCD_IPPROTO_AH) {
			*l4 = h[0];
			*off += ((__u32)h[1] + 2) * 4;
		} else {
			*l4 = h[0];
			*off += ((__u32)h[1] + 1) * 8;
		}
	}
	p->key.proto = *l4;
	if (afcd_ipv6_ext(*l4))
		return AFCD_P_MALFORMED; /* chain longer than we follow */
	return AFCD_PARSE_MORE;
}

/* The parser, on a window given as for afcd_at(). Returns enum
 * afcd_parse_status; p is fully written in every case (zeroed fields
 * where unknown). */
AFCD_INLINE int afcd_parse_at(const __u8 *base, const __u8 *end, __u32 len, int copy,
			      struct afcd_pkt *p)
{
	const __u8 *h;
	__u32 off;
	__u16 proto;
	__u8 l4 = 0;
	int i, st;

	__builtin_memset(p, 0, sizeof(*p));

	h = afcd_at(base, end, len, copy, 0, AFCD_ETH_HLEN);
	if (!h)
		return AFCD_P_NON_IP; /* runt frame: not even Ethernet */
	proto = AFCD_BE16(*(const __u16 *)(h + 12));
	off = AFCD_ETH_HLEN;

#pragma unroll
	for (i = 0; i < AFCD_VLAN_MAX; i++) {
		if (proto != AFCD_ETH_P_8021Q && proto != AFCD_ETH_P_8021AD)
			break;
		h = afcd_at(base, end, len, copy, off, 4);
		if (!h)
			return AFCD_P_NON_IP;
		proto = AFCD_BE16(*(const __u16 *)(h + 2));
		off += 4;
	}

	p->l3_off = (__u16)off;
	if (proto == AFCD_ETH_P_IP)
		st = afcd_parse_ipv4(base, end, len, copy, &off, &l4, p);
	else if (proto == AFCD_ETH_P_IPV6)
		st = afcd_parse_ipv6(base, end, len, copy, &off, &l4, p);
	else
		return AFCD_P_NON_IP;
	if (st != AFCD_PARSE_MORE)
		return st;

	if (l4 == AFCD_IPPROTO_TCP || l4 == AFCD_IPPROTO_UDP ||
	    l4 == AFCD_IPPROTO_UDPLITE || l4 == AFCD_IPPROTO_SCTP ||
	    l4 == AFCD_IPPROTO_DCCP) {
		h = afcd_at(base, end, len, copy, off, 4);
		if (!h)
			return AFCD_P_MALFORMED;
		p->key.sport = *(const __u16 *)h;
		p->key.dport = *(const __u16 *)(h + 2);
	}
	return AFCD_P_IP;
}

/* Parse [data, data_end) by direct packet access (the tc program). */
AFCD_INLINE int afcd_parse(const void *data, const void *data_end, struct afcd_pkt *p)
{
	return afcd_parse_at((const __u8 *)data, (const __u8 *)data_end, 0, 0, p);
}

/* Parse the first len bytes of a frame copied into buf, a buffer of
 * AFCD_PARSE_COPY_MAX bytes (the qdisc backend: a dynptr read of the skb).
 * Gives what afcd_parse() gives on the whole frame when its headers lie
 * within the first len bytes. */
AFCD_INLINE int afcd_parse_copy(const __u8 *buf, __u32 len, struct afcd_pkt *p)
{
	return afcd_parse_at(buf, 0, len, 1, p);
}

#endif /* AFCD_PARSE_H */
