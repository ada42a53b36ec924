# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The wire (testbed/wire.py) on the host, with this test in QEMU's place:
tx -> rx runs at the wire's rate and pushes back (a sender that does not
wait is told to), rx -> tx is not paced, and the wrapper hands QEMU the
two sockets as the NICs' backends."""
import json
import os
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

from testbed import wire

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FRAME = 1000            # bytes: 1,024 on the wire with Ethernet's overhead
RATE_MBIT = 8.0         # 1 ms a frame


def _connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, wire.SNDBUF)
    s.connect(path)
    return s


def _read_frames(s, n):
    """Read n frames in QEMU's framing; the time each arrived."""
    t, buf = [], b""
    while len(t) < n:
        while len(buf) < 4 or len(buf) < 4 + struct.unpack(">I", buf[:4])[0]:
            b = s.recv(65536)
            assert b, "the wire closed"
            buf += b
        k = 4 + struct.unpack(">I", buf[:4])[0]
        buf = buf[k:]
        t.append(time.monotonic())
    return t


@pytest.fixture
def ends():
    w = wire.Wire(RATE_MBIT)
    tx, rx = _connect(w.paths["tx"]), _connect(w.paths["rx"])
    yield w, tx, rx
    tx.close()
    rx.close()
    w.stop()


def test_paced_at_its_rate(ends):
    """Expected: 200 frames sent at once arrive at the wire's rate (the
    first one's serialisation aside), never faster, and at least half of
    it: on a loaded machine the pacing thread waits for the CPU (0.71x
    measured at nice 19 beside a TCG VM that held both cores), and half
    still tells a wire that paces against a wrong clock or size."""
    w, tx, rx = ends
    n = 200
    frame = struct.pack(">I", FRAME) + b"x" * FRAME
    threading.Thread(target=lambda: [tx.sendall(frame) for _ in range(n)],
                     daemon=True).start()
    t = _read_frames(rx, n)
    rate = (n - 1) * (FRAME + wire.ETH_OVERHEAD) * 8 / (t[-1] - t[0]) / 1e6
    assert 0.5 * RATE_MBIT <= rate <= 1.02 * RATE_MBIT, rate


def test_pushes_back(ends):
    """Expected: a sender that does not wait is refused (EAGAIN) after a
    few frames: what the wire holds beyond the sender is its socket's
    buffer, not an unbounded queue."""
    w, tx, rx = ends
    tx.setblocking(False)
    frame = struct.pack(">I", FRAME) + b"x" * FRAME
    sent = 0
    with pytest.raises(BlockingIOError):
        for _ in range(1000):
            tx.send(frame)
            sent += 1
    assert sent <= 40, sent


def test_back_direction_not_paced(ends):
    """Expected: rx -> tx (the ACKs) goes as fast as it is read: 200
    frames in a fraction of the time the wire's rate would take; the
    counters say what each direction carried."""
    w, tx, rx = ends
    n = 200
    frame = struct.pack(">I", FRAME) + b"y" * FRAME
    t0 = time.monotonic()
    threading.Thread(target=lambda: [rx.sendall(frame) for _ in range(n)],
                     daemon=True).start()
    t = _read_frames(tx, n)
    paced_s = n * (FRAME + wire.ETH_OVERHEAD) * 8 / (RATE_MBIT * 1e6)
    assert t[-1] - t0 < paced_s / 2, (t[-1] - t0, paced_s)
    time.sleep(0.05)
    st = w.stats
    assert st["rx_tx"]["frames"] == n and st["rx_tx"]["bytes"] == n * FRAME, st
    assert st["tx_rx"]["frames"] == 0, st


def test_refuses_a_rate_of_zero():
    with pytest.raises(ValueError):
        wire.Wire(0)


def test_qemu_wrapper_hands_over_the_sockets(tmp_path):
    """Expected: run as QEMU's binary with a guest to boot, the wrapper
    adds one virtio-net NIC per end, each on a socket connected to the
    wire and inherited by QEMU, with the wire's MAC; without a guest
    (vng's `qemu --version`) the arguments pass unchanged."""
    fake = tmp_path / "qemu"
    fake.write_text("#!%s\nimport json, os, stat, sys\n"
                    "fds = [int(a.split('fd=')[1]) for a in sys.argv if 'fd=' in a]\n"
                    "print(json.dumps({'argv': sys.argv[1:], 'sockets': "
                    "[stat.S_ISSOCK(os.fstat(f).st_mode) for f in fds]}))\n" % sys.executable)
    fake.chmod(0o755)
    w = wire.Wire(RATE_MBIT)
    try:
        env = dict(os.environ, **w.env(), **{wire.QEMU_ENV: str(fake)})
        run = [sys.executable, os.path.join(ROOT, "testbed", "wire.py")]
        got = json.loads(subprocess.run(run + ["-m", "2G", "-kernel", "vmlinuz"], env=env,
                                        capture_output=True, text=True, check=True).stdout)
        a = got["argv"]
        assert a[:4] == ["-m", "2G", "-kernel", "vmlinuz"], a
        nets = [a[i + 1] for i, x in enumerate(a) if x == "-netdev"]
        devs = [a[i + 1] for i, x in enumerate(a) if x == "-device"]
        assert [n.split(",fd=")[0] for n in nets] == ["socket,id=wire0", "socket,id=wire1"]
        assert devs == ["virtio-net-pci,netdev=wire0,mac=%s" % wire.WIRE_MACS["tx"],
                        "virtio-net-pci,netdev=wire1,mac=%s" % wire.WIRE_MACS["rx"]], devs
        assert got["sockets"] == [True, True], got
        got = json.loads(subprocess.run(run + ["--version"], env=env, capture_output=True,
                                        text=True, check=True).stdout)
        assert got["argv"] == ["--version"], got
    finally:
        w.stop()
