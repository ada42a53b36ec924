#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The wire: a link of a set rate that pushes back, for the VM.

A veth never pushes back (its transmit cannot fail for lack of room), so a
qdisc at its root is dequeued as fast as the CPU goes and never holds a
queue of its own; a rate has to be configured. A router's egress NIC is
different: its driver stops the queue when the ring fills, and the qdisc
holds the backlog at the NIC's own rate. The wire gives the VM such a NIC.

The guest gets two virtio-net NICs (WIRE_MACS: "tx" and "rx"). Each is a
QEMU `-netdev socket` on a Unix stream socket to a relay in the host
process (Wire), in QEMU's stream framing (a 4-byte big-endian length, then
the frame). The relay carries tx -> rx at the wire's rate, one frame at a
time: it reads a frame, holds it for its serialisation time (frame plus
ETH_OVERHEAD bytes at the rate), writes it to rx, and only then reads the
next. Frames not read wait in QEMU's socket, whose send buffer is
SNDBUF bytes (QEMU is given the socket already connected, by qemu_main()
run as QEMU's binary); when it is full QEMU stops taking frames from the
virtio ring, the ring fills, and the guest's driver stops its queue (with
BQL in the guest's virtio_net, after a few frames). What the wire holds
beyond the qdisc is then about SNDBUF's 2-4 frames and BQL's limit, like a
NIC's ring. rx -> tx (the ACKs) goes unpaced.

Host side: Wire(rate_mbit) opens the two listening sockets and serves
them in threads; env() is what QEMU's wrapper needs; stop() returns what
each direction carried (frames, bytes, and for tx -> rx the time it was
busy, and the time it lost with a frame waiting because the host woke the
relay late: lost_s). Guest side: wire_devs() finds the two NICs by MAC.
"""
import json
import os
import socket
import struct
import sys
import tempfile
import threading
import time

# the NICs' addresses: locally administered, one per end
WIRE_MACS = {"tx": "52:54:00:af:cd:01", "rx": "52:54:00:af:cd:02"}
# bytes a frame takes on an Ethernet wire beyond what the NIC is handed:
# preamble 8, FCS 4, inter-frame gap 12 (IEEE 802.3)
ETH_OVERHEAD = 24
# QEMU's socket send buffer, bytes (SO_SNDBUF: the kernel doubles it, and
# a frame takes about 3 KB of it with its overhead, so about 11 frames
# wait there). Under TCG QEMU takes milliseconds to answer the socket
# turning writable; a shallower buffer runs dry meanwhile and idles the
# wire. AFCD_WIRE_SNDBUF overrides it.
SNDBUF = int(os.environ.get("AFCD_WIRE_SNDBUF", "16384"))
# how late the host may wake the relay and the wire still send the next
# frame as if on time, s (a longer stall is lost, and counted: lost_s).
# QEMU's TCG vCPUs hold the host's cores: with 1 ms the relay alone ran
# at 0.71 of its rate beside such a VM (tests/unit/test_wire.py), and the
# guest saw its NIC 70-84 % busy under afcd's qdisc; with 4 ms, 98 % (the
# relay lost 0.12 s in 42 s of carrying). The cost of a deeper
# slack is a burst of at most that much at rate after a stall, where a
# wire would have spread it: within the guest's own timer lateness
CATCH_UP_S = 0.004
ENV = "AFCD_WIRE"           # "TX_PATH,RX_PATH": read by qemu_main()
QEMU_ENV = "AFCD_WIRE_QEMU"  # the real QEMU binary (default: on PATH)


def _recv_exact(s, n):
    buf = bytearray()
    while len(buf) < n:
        b = s.recv(n - len(buf))
        if not b:
            raise EOFError
        buf += b
    return bytes(buf)


class Wire:
    """A relay of rate_mbit (Mbit/s, > 0) from the tx NIC to the rx NIC,
    serving QEMU's two sockets from threads until stop()."""

    def __init__(self, rate_mbit):
        if not rate_mbit > 0:
            raise ValueError("the wire's rate must be above 0 Mbit/s, not %r" % rate_mbit)
        self.rate_bps = rate_mbit * 1e6
        self.dir = tempfile.mkdtemp(prefix="afcd-wire-")
        self.paths = {end: os.path.join(self.dir, end + ".sock") for end in WIRE_MACS}
        self.listen = {}
        for end, path in self.paths.items():
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(path)
            s.listen(1)
            self.listen[end] = s
        self.stats = {"tx_rx": {"frames": 0, "bytes": 0, "busy_s": 0.0, "lost_s": 0.0},
                      "rx_tx": {"frames": 0, "bytes": 0}}
        self.conn = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def env(self):
        """The environment QEMU's wrapper (qemu_main) needs."""
        return {ENV: "%s,%s" % (self.paths["tx"], self.paths["rx"])}

    def _serve(self):
        try:
            for end in ("tx", "rx"):         # qemu_main() connects in this order
                self.conn[end], _ = self.listen[end].accept()
        except OSError:
            return                            # stopped before QEMU came
        back = threading.Thread(target=self._carry, args=("rx", "tx", None), daemon=True)
        back.start()
        self._carry("tx", "rx", self.rate_bps)

    def _carry(self, src, dst, rate_bps):
        """Frames from src to dst, each held for its serialisation time at
        rate_bps (None: unpaced) after the previous one left."""
        st = self.stats["%s_%s" % (src, dst)]
        free_at = time.monotonic()              # when the wire is next idle
        try:
            while not self._stop.is_set():
                try:
                    backlogged = bool(self.conn[src].recv(1, socket.MSG_PEEK |
                                                          socket.MSG_DONTWAIT))
                except BlockingIOError:
                    backlogged = False
                hdr = _recv_exact(self.conn[src], 4)
                frame = _recv_exact(self.conn[src], struct.unpack(">I", hdr)[0])
                if rate_bps:
                    # a frame that was waiting when the last one left
                    # (backlogged) starts where that one ended, if the
                    # host's timer woke the relay at most CATCH_UP_S late;
                    # one that came to an idle wire, or after the host
                    # stalled the relay, starts now (a wire never sends
                    # above its rate to make up for lost time)
                    tx_s = (len(frame) + ETH_OVERHEAD) * 8 / rate_bps
                    now = time.monotonic()
                    late = backlogged and now - free_at <= CATCH_UP_S
                    if backlogged and not late:
                        st["lost_s"] += now - free_at
                    free_at = (free_at if late else max(free_at, now)) + tx_s
                    st["busy_s"] += tx_s
                    wait = free_at - time.monotonic()
                    if wait > 0:
                        time.sleep(wait)
                self.conn[dst].sendall(hdr + frame)
                st["frames"] += 1
                st["bytes"] += len(frame)
        except (EOFError, OSError):
            pass                                # QEMU went away

    def stop(self):
        """Close everything; what each direction carried."""
        self._stop.set()
        for s in list(self.listen.values()) + list(self.conn.values()):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()
        self._thread.join(timeout=5)
        for p in self.paths.values():
            try:
                os.unlink(p)
            except OSError:
                pass
        try:
            os.rmdir(self.dir)
        except OSError:
            pass
        return json.loads(json.dumps(self.stats))


def wire_devs():
    """In the guest: {"tx": ifname, "rx": ifname} of the wire's NICs (by
    MAC), or {} without a wire."""
    found = {}
    for dev in os.listdir("/sys/class/net"):
        try:
            with open("/sys/class/net/%s/address" % dev) as fh:
                mac = fh.read().strip()
        except OSError:
            continue
        for end, m in WIRE_MACS.items():
            if mac == m:
                found[end] = dev
    return found if len(found) == 2 else {}


def qemu_main(argv):
    """Run as QEMU's binary (vng --qemu): with ENV set and a guest to boot,
    connect to the wire's two sockets with a send buffer of SNDBUF bytes,
    and hand them to QEMU as the NICs' backends; else QEMU unchanged."""
    real = os.environ.get(QEMU_ENV) or "/usr/bin/qemu-system-x86_64"
    args = list(argv)
    keep = []
    spec = os.environ.get(ENV)
    if spec and "-kernel" in args:
        for i, (end, path) in enumerate(zip(("tx", "rx"), spec.split(","))):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
            s.connect(path)
            os.set_inheritable(s.fileno(), True)
            keep.append(s)
            args += ["-netdev", "socket,id=wire%d,fd=%d" % (i, s.fileno()),
                     "-device", "virtio-net-pci,netdev=wire%d,mac=%s" % (i, WIRE_MACS[end])]
    os.execv(real, [real] + args)


if __name__ == "__main__":
    qemu_main(sys.argv[1:])
