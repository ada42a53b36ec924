/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pkt.h - crafted packets for the host tests, the BPF_PROG_TEST_RUN tests
 * and the bench (lib/: what tools and tests share):
 * Ethernet, optional VLAN tags, IPv4 (with a valid header checksum) or
 * IPv6 (with optional extension headers), TCP/UDP ports, padding.
 */
#ifndef AFCD_PKT_H
#define AFCD_PKT_H

#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#define PKT_MAX 2048

struct pkt_spec {
	int family;          /* 4 or 6 */
	uint8_t proto;       /* IPPROTO_TCP, IPPROTO_UDP, IPPROTO_ICMP, ... */
	uint8_t ecn;         /* 0..3 */
	uint32_t src4, dst4; /* host order */
	uint8_t src6[16], dst6[16];
	uint16_t sport, dport;
	int vlans;           /* 0..2 tags */
	int total_len;       /* wire length of the whole frame, bytes (>= headers) */
	const uint8_t *v6_ext;  /* raw extension headers after the IPv6 header */
	int v6_ext_len;
	uint8_t v6_first_nh;    /* next header in the IPv6 header when v6_ext is set */
	uint16_t frag_off;      /* IPv4 flags+offset field, host order */
};

static inline uint16_t pkt_csum16(const uint8_t *p, int len)
{
	uint32_t s = 0;
	int i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* Writes the frame into buf (PKT_MAX bytes), returns its length. */
static inline int pkt_build(uint8_t *buf, const struct pkt_spec *s)
{
	int off = 12, l3, l4, len, i, hdrs;
	uint16_t et = s->family == 6 ? 0x86DD : 0x0800;

	memset(buf, 0, PKT_MAX);
	memcpy(buf, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
	for (i = 0; i < s->vlans; i++) {
		uint16_t tpid = (i == 0 && s->vlans == 2) ? 0x88A8 : 0x8100;

		buf[off] = tpid >> 8;
		buf[off + 1] = tpid & 0xff;
		buf[off + 2] = 0;
		buf[off + 3] = 10 + i; /* VID */
		off += 4;
	}
	buf[off] = et >> 8;
	buf[off + 1] = et & 0xff;
	l3 = off + 2;

	if (s->family == 4) {
		l4 = l3 + 20;
		hdrs = l4 + 8;
		len = s->total_len > hdrs ? s->total_len : hdrs;
		buf[l3] = 0x45;
		buf[l3 + 1] = s->ecn & 3;
		buf[l3 + 2] = (len - l3) >> 8;
		buf[l3 + 3] = (len - l3) & 0xff;
		buf[l3 + 6] = s->frag_off >> 8;
		buf[l3 + 7] = s->frag_off & 0xff;
		buf[l3 + 8] = 64;
		buf[l3 + 9] = s->proto;
		{
			uint32_t a = htonl(s->src4), b = htonl(s->dst4);

			memcpy(buf + l3 + 12, &a, 4);
			memcpy(buf + l3 + 16, &b, 4);
		}
		{
			uint16_t c = pkt_csum16(buf + l3, 20);

			buf[l3 + 10] = c >> 8;
			buf[l3 + 11] = c & 0xff;
		}
	} else {
		l4 = l3 + 40 + s->v6_ext_len;
		hdrs = l4 + 8;
		len = s->total_len > hdrs ? s->total_len : hdrs;
		buf[l3] = 0x60;
		buf[l3 + 1] = (uint8_t)((s->ecn & 3) << 4);
		buf[l3 + 4] = (len - l3 - 40) >> 8;
		buf[l3 + 5] = (len - l3 - 40) & 0xff;
		buf[l3 + 6] = s->v6_ext ? s->v6_first_nh : s->proto;
		buf[l3 + 7] = 64;
		memcpy(buf + l3 + 8, s->src6, 16);
		memcpy(buf + l3 + 24, s->dst6, 16);
		if (s->v6_ext)
			memcpy(buf + l3 + 40, s->v6_ext, s->v6_ext_len);
	}
	buf[l4] = s->sport >> 8;
	buf[l4 + 1] = s->sport & 0xff;
	buf[l4 + 2] = s->dport >> 8;
	buf[l4 + 3] = s->dport & 0xff;
	return len;
}

/* A TCP/IPv4 frame of total_len bytes from 198.18.0.1 to 198.19.0.1. */
static inline struct pkt_spec pkt_tcp4(uint16_t sport, int total_len)
{
	struct pkt_spec s;

	memset(&s, 0, sizeof(s));
	s.family = 4;
	s.proto = 6;
	s.src4 = 0xC6120001; /* 198.18.0.1 */
	s.dst4 = 0xC6130001; /* 198.19.0.1 */
	s.sport = sport;
	s.dport = 5201;
	s.total_len = total_len;
	return s;
}

/* A TCP/IPv6 frame from fd00::1 to fd00::2. */
static inline struct pkt_spec pkt_tcp6(uint16_t sport, int total_len)
{
	struct pkt_spec s;

	memset(&s, 0, sizeof(s));
	s.family = 6;
	s.proto = 6;
	s.src6[0] = 0xfd;
	s.src6[15] = 1;
	s.dst6[0] = 0xfd;
	s.dst6[15] = 2;
	s.sport = sport;
	s.dport = 5201;
	s.total_len = total_len;
	return s;
}

#endif /* AFCD_PKT_H */
