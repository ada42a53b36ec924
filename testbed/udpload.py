# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Open-loop UDP senders and a receiver that counts what arrives, for the
datapath's fairness tests on real interfaces (tests/netns/test_gso.py).

A sender paces datagrams of SIZE payload bytes at RATE bits/s of payload
for DURATION seconds (Poisson gaps, so that two senders never phase-lock
with the virtual queue). With --gso N it sends each N datagrams as one
UDP_SEGMENT super-packet (setsockopt(SOL_UDP, UDP_SEGMENT, SIZE), Linux
>= 4.18): one sendmsg of N * SIZE bytes that the kernel segments into N
datagrams after the egress hook, whatever ethtool says, as any
unprivileged process may do. Errors of a send (ENOBUFS when the egress
program drops it) are counted, not raised.

  python3 -m testbed.udpload send SRC DST PORT RATE_BPS SIZE DURATION_S [--gso N] [--seed S]
      prints {"sent_bytes", "sends", "errors"}
  python3 -m testbed.udpload recv ADDR PORT[,PORT..] DURATION_S FROM_S
      prints {"PORT": payload bytes received in [FROM_S, DURATION_S)} and
      stops after DURATION_S

Addresses are the caller's (the tests use 198.18.0.0/15); both ends stop
by themselves.
"""
import json
import random
import selectors
import socket
import sys
import time

SOL_UDP = 17
UDP_SEGMENT = 103       # include/uapi/linux/udp.h
MAX_PAYLOAD = 65507     # one UDP datagram (IPv4), and so one super-packet


def send(src, dst, port, rate_bps, size, duration_s, gso=1, seed=1):
    """Pace sends of gso * size payload bytes at rate_bps; returns counts."""
    if gso < 1 or gso * size > MAX_PAYLOAD:
        raise ValueError("gso * size must be in [1, %d]" % MAX_PAYLOAD)
    rng = random.Random(seed)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((src, 0))
    if gso > 1:
        s.setsockopt(SOL_UDP, UDP_SEGMENT, size)
    buf = b"\0" * (gso * size)
    mean_gap = len(buf) * 8.0 / rate_bps
    t0 = time.monotonic()
    t = t0
    sent = sends = errors = 0
    while t - t0 < duration_s:
        now = time.monotonic()
        if t > now:
            time.sleep(t - now)
        try:
            s.sendto(buf, (dst, port))
            sent += len(buf)
            sends += 1
        except OSError:
            errors += 1
        t += rng.expovariate(1.0 / mean_gap)
    s.close()
    return {"sent_bytes": sent, "sends": sends, "errors": errors}


def recv(addr, ports, duration_s, from_s):
    """Payload bytes per port received from from_s to duration_s."""
    sel = selectors.DefaultSelector()
    got = {}
    for p in ports:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        s.bind((addr, p))
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, p)
        got[p] = 0
    t0 = time.monotonic()
    while True:
        left = duration_s - (time.monotonic() - t0)
        if left <= 0:
            break
        for key, _ in sel.select(min(left, 0.2)):
            while True:
                try:
                    n = len(key.fileobj.recv(MAX_PAYLOAD))
                except BlockingIOError:
                    break
                if time.monotonic() - t0 >= from_s:
                    got[key.data] += n
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    return {str(p): n for p, n in got.items()}


def main(argv):
    if len(argv) >= 7 and argv[0] == "send":
        opts = dict(zip(argv[7::2], argv[8::2]))
        out = send(argv[1], argv[2], int(argv[3]), float(argv[4]), int(argv[5]),
                   float(argv[6]), gso=int(opts.get("--gso", 1)),
                   seed=int(opts.get("--seed", 1)))
    elif len(argv) == 5 and argv[0] == "recv":
        out = recv(argv[1], [int(p) for p in argv[2].split(",")], float(argv[3]),
                   float(argv[4]))
    else:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
