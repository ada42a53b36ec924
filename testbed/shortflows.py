# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Short-lived TCP flows and their completion times, in the manner of the
Harpoon generator the dissertation used (sec. 3.4.6: exponential
inter-connection times, Pareto file sizes; sec. 4.5.3 (2): Pareto sizes
with a 10 KB mean and shape 1.1), which Debian does not package.

Each flow is one TCP connection from the client (a sender host) to the
server (the receiver). Its first 9 bytes say its direction and size: 'U'
(upload: the client sends the file, through the bottleneck, and the server
answers one byte when it has all of it) or 'D' (download: the server sends
the file back, on the reverse path). The flow completion time (FCT) is from
the start of connect() to the last byte (D) or the answer (U). Arrivals are
Poisson at a given rate; sizes Pareto(alpha, scale) truncated at max_bytes
(inverse transform of the truncated distribution, not a cap).

  python3 -m testbed.shortflows server PORT DURATION_S
  python3 -m testbed.shortflows client DST PORT RATE_PER_S ALPHA SCALE_B MAX_B
                                       DURATION_S SEED DIRS
      DIRS: "U", "D" or "UD" (each flow picks one at random: two-way).
      Prints one JSON object: flows [[t_start_s, bytes, dir, fct_s or null]],
      arrivals, skipped (over the concurrency bound), duration_s.

Both ends stop by themselves: the server DURATION_S + 15 s after it
starts, the client's flows 10 s after its last arrival at the latest.
"""
import json
import math
import random
import socket
import socketserver
import struct
import sys
import threading
import time

HEADER = struct.Struct("!cQ")          # direction, size in bytes
CHUNK = 65536
MAX_OPEN = 256                          # concurrent flows of one client
GRACE_S = 10.0                          # how long the last flows may take
_PAYLOAD = b"\0" * CHUNK


def pareto_truncated(rng, alpha, scale, max_bytes):
    """One size, bytes: Pareto(alpha, scale) conditioned on <= max_bytes."""
    tail = (scale / max_bytes) ** alpha
    u = rng.random()
    return int(scale / (1.0 - u * (1.0 - tail)) ** (1.0 / alpha))


def pareto_truncated_mean(alpha, scale, max_bytes):
    """E[size] of the truncated distribution above, bytes."""
    tail = (scale / max_bytes) ** alpha
    if abs(alpha - 1.0) < 1e-9:
        return scale * math.log(max_bytes / scale) / (1.0 - tail)
    return (alpha * scale ** alpha / (1.0 - tail) *
            (max_bytes ** (1.0 - alpha) - scale ** (1.0 - alpha)) / (1.0 - alpha))


def _recv_exact(s, n):
    got = 0
    while got < n:
        b = s.recv(min(CHUNK, n - got))
        if not b:
            raise ConnectionError("closed after %d of %d bytes" % (got, n))
        got += len(b)


def _send_n(s, n):
    while n > 0:
        k = min(CHUNK, n)
        s.sendall(_PAYLOAD[:k])
        n -= k


class _Handler(socketserver.BaseRequestHandler):
    def handle(self):
        s = self.request
        s.settimeout(30)
        try:
            hdr = b""
            while len(hdr) < HEADER.size:
                b = s.recv(HEADER.size - len(hdr))
                if not b:
                    return
                hdr += b
            d, n = HEADER.unpack(hdr)
            if d == b"U":
                _recv_exact(s, n)
                s.sendall(b"!")
            else:
                _send_n(s, n)
        except (OSError, ConnectionError):
            pass


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512


def server(port, duration_s):
    srv = _Server(("0.0.0.0", port), _Handler)
    th = threading.Thread(target=srv.serve_forever, daemon=True)
    th.start()
    time.sleep(duration_s + 15.0)
    srv.shutdown()
    return 0


def arrivals(rate, alpha, scale, max_bytes, duration_s, seed, dirs):
    """The short flows' schedule, the same in every engine: Poisson
    arrivals at rate per second until duration_s, each a size drawn from
    the truncated Pareto (bytes) and a direction from dirs (U: up, D:
    down), from the seeded generator. Yields (t_s, size, dir)."""
    rng = random.Random(seed)
    t = rng.expovariate(rate)
    while t < duration_s:
        yield t, pareto_truncated(rng, alpha, scale, max_bytes), rng.choice(dirs)
        t += rng.expovariate(rate)


def client(dst, port, rate, alpha, scale, max_bytes, duration_s, seed, dirs):
    flows, lock, sem = [], threading.Lock(), threading.BoundedSemaphore(MAX_OPEN)
    t0 = time.monotonic()
    skipped = n_arrivals = 0

    def one(t_start, size, d):
        fct = None
        try:
            a = time.monotonic()
            with socket.create_connection((dst, port), timeout=30) as s:
                s.sendall(HEADER.pack(d.encode(), size))
                if d == "U":
                    _send_n(s, size)
                    _recv_exact(s, 1)
                else:
                    _recv_exact(s, size)
            fct = time.monotonic() - a
        except (OSError, ConnectionError):
            pass
        finally:
            sem.release()
        with lock:
            flows.append([round(t_start, 4), size, d, fct])

    threads = []
    for t_next, size, d in arrivals(rate, alpha, scale, max_bytes, duration_s, seed, dirs):
        delay = t0 + t_next - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        n_arrivals += 1
        if sem.acquire(blocking=False):
            th = threading.Thread(target=one, args=(t_next, size, d), daemon=True)
            th.start()
            threads.append(th)
        else:
            skipped += 1
            with lock:
                flows.append([round(t_next, 4), size, d, None])
    end = time.monotonic() + GRACE_S
    for th in threads:
        th.join(max(0.0, end - time.monotonic()))
    with lock:
        out = {"flows": sorted(flows), "arrivals": n_arrivals, "skipped": skipped,
               "duration_s": duration_s, "rate_per_s": rate, "alpha": alpha,
               "scale_bytes": scale, "max_bytes": max_bytes, "dirs": dirs}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    return 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "server":
        return server(int(argv[1]), float(argv[2]))
    if len(argv) == 10 and argv[0] == "client":
        return client(argv[1], int(argv[2]), float(argv[3]), float(argv[4]), float(argv[5]),
                      float(argv[6]), float(argv[7]), int(argv[8]), argv[9])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
