# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The VM the testbed runs in when this kernel lacks sch_fq or netem: the
Debian kernels in /boot, and a command re-run inside virtme-ng (TCG
unless AFCD_VM_KVM=1), this filesystem read-only, results written back
through --rwdir."""
import collections
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

from . import netns as nslib
from . import wire

ROOT = nslib.ROOT
# the modules the scenarios use (Debian builds them as modules)
VM_MODULES = ["sch_fq", "sch_netem", "sch_htb", "sch_tbf", "sch_codel", "sch_fq_codel",
              "sch_pie", "sch_red", "sch_sfb", "sch_cake", "sch_fq_pie", "sch_ingress",
              "cls_bpf", "veth", "tcp_highspeed", "tcp_dctcp", "tcp_bbr", "virtio_net"]


def say(*a):
    print(*a, flush=True)


def kernel_has_qdiscs(kinds=("fq", "netem")):
    """Try each qdisc on lo of a scratch namespace."""
    name = "afcd-probe%d" % os.getpid()
    if subprocess.run(["ip", "netns", "add", name], capture_output=True).returncode:
        return False
    try:
        ok = True
        for k in kinds:
            r = subprocess.run(nslib.ns_cmd(name, ["tc", "qdisc", "add", "dev", "lo", "root",
                                                   k]), capture_output=True)
            ok &= r.returncode == 0
            subprocess.run(nslib.ns_cmd(name, ["tc", "qdisc", "del", "dev", "lo", "root"]),
                           capture_output=True)
        return ok
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)


VM_KERNEL_DEFAULT = "6.1"   # Debian 12's own; "6.12" is bookworm's second


def vm_kernels(series=None):
    """The Debian kernels in /boot, newest first; with series ("6.1",
    "6.12") only those of it."""
    ks = sorted(glob.glob("/boot/vmlinuz-*-amd64"), reverse=True,
                key=lambda p: [int(x) if x.isdigit() else -1
                               for x in os.path.basename(p)[8:].replace("-", ".")
                               .replace("+", ".").split(".")])
    if series:
        ks = [k for k in ks if os.path.basename(k).startswith("vmlinuz-%s." % series)]
    return ks


def vm_kernel(want=None):
    """--kernel: a path to a vmlinuz, or a series ("6.1", "6.12": its newest
    kernel in /boot). None when there is no such kernel."""
    want = want or os.environ.get("AFCD_VM_KERNEL") or VM_KERNEL_DEFAULT
    if os.path.sep in want:
        return want if os.path.exists(want) else None
    ks = vm_kernels(want)
    return ks[0] if ks else None


def release_tuple(release):
    """(major, minor) of a kernel release or series: "6.18.15+deb13-amd64"
    -> (6, 18)."""
    return tuple(int(x) for x in release.split("-")[0].split("+")[0].split(".")[:2])


# BPF qdiscs (struct Qdisc_ops as struct_ops): Linux >= 6.16 with
# CONFIG_NET_SCH_BPF, which Debian enables from 6.17
BPF_QDISC_SINCE = (6, 17)


def qdisc_kernel():
    """The series ("6.18") of the newest kernel in /boot with BPF qdiscs
    (Debian's from 6.17, which tools/deps.sh --vm unpacks), or None."""
    for k in vm_kernels():
        series = ".".join(os.path.basename(k)[len("vmlinuz-"):].split(".")[:2])
        if release_tuple(series) >= BPF_QDISC_SINCE:
            return series
    return None


def kernel_has_bpf_qdisc():
    """Can the running kernel take a BPF qdisc (its BTF has the
    struct_ops type of Qdisc_ops, as the loader checks)?"""
    try:
        with open("/sys/kernel/btf/vmlinux", "rb") as fh:
            return b"bpf_struct_ops_Qdisc_ops" in fh.read()
    except OSError:
        return False


def in_vm():
    return os.environ.get("AFCD_IN_VM") == "1"


# Jump labels (static keys) that the tests would flip while packets flow.
# The kernel flips one by patching its code, with an int3 in place for a
# moment; under TCG, a vCPU then runs into that int3 after the patch is
# over ("Oops: int3" in netif_rx_internal() or
# __netif_receive_skb_core(), "Fatal exception in interrupt"): a
# socket's SO_TIMESTAMP flipping netstamp_needed_key under a UDP flood
# panicked Debian's 6.18.15 guest in 3 runs of 3, 0.4-8 s into it, with
# no qdisc or program of this project (2026-11-25; docs/LIMITS.md). Each ping's start and exit flips that key (the
# first and the last socket with SO_TIMESTAMP), and the first and the
# last clsact or tcx hook flip ingress_needed_key and egress_needed_key.
# The guest holds them on from before the first packet: a test's flip
# then only counts.
SO_TIMESTAMP = 29      # asm-generic/socket.h (SO_TIMESTAMP_OLD); Python lacks it
_held = []
# net_get_random_once() (include/linux/once.h) keys the hash secrets of
# inet_ehashfn(), inet6_ehashfn(), the TCP sequence and timestamp offsets
# and the UDP hashes: its first call disables a static key, from a work
# item, while other vCPUs run the code it patches. The guest's first TCP
# connection, an iperf3 test's under load, panicked Debian's 6.18.15
# guest once so ("Oops: int3" in inet_ehashfn() from tcp_v4_connect(),
# 2026-11-26). A TCP connection and a UDP datagram over lo, IPv4 and
# IPv6, take those first calls before any load, and ONCE_SETTLE_S lets
# the work item finish.
ONCE_SETTLE_S = 0.5


def _take_first_calls():
    """Over lo: a TCP connection and a UDP datagram for each family
    that lo has (one without an address is skipped). Returns the
    families that went through."""
    done = []
    for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            with socket.socket(fam, socket.SOCK_STREAM) as srv:
                srv.bind((addr, 0))
                srv.listen(1)
                with socket.create_connection(srv.getsockname()[:2], timeout=2):
                    srv.settimeout(2)
                    srv.accept()[0].close()
            with socket.socket(fam, socket.SOCK_DGRAM) as rx, \
                    socket.socket(fam, socket.SOCK_DGRAM) as tx:
                rx.bind((addr, 0))
                rx.settimeout(2)
                tx.connect(rx.getsockname()[:2])
                tx.send(b"x")
                rx.recv(1)
            done.append(fam)
        except OSError:
            continue
    time.sleep(ONCE_SETTLE_S)
    return done


def hold_jump_labels():
    """In the guest: net_get_random_once()'s first calls taken
    (_take_first_calls()), netstamp_needed_key held on by a socket with
    SO_TIMESTAMP kept open for this process's life, the ingress and
    egress keys by a clsact qdisc on the root namespace's lo."""
    if _held:
        return
    _take_first_calls()
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMP, 1)
    _held.append(s)
    r = subprocess.run(["tc", "qdisc", "replace", "dev", "lo", "clsact"], capture_output=True,
                       text=True)
    if r.returncode:
        say("afcd-testbed: the ingress and egress jump labels are not held (tc: %s): an "
            "attach or detach under load can panic this guest" % r.stderr.strip())


# a line of the guest kernel's console, or of virtme-ng's and the boot
# loader's own chatter before the command runs. printk's prefix is
# "[%5lu.%06lu]" (kernel/printk/printk.c print_time()), with
# "[    T123]" after it under CONFIG_PRINTK_CALLER: always six decimals,
# so a script's own "[1.5] ..." is not taken for the kernel's
KERNEL_LINE = re.compile(r"^(\[\s*\d+\.\d{6}\](\[\s*[TC]\d+\])? |virtme|fuse: |"
                         r"Probing EDD|Memory KASLR|Poking KASLR)")
GUEST_KERNEL_TAIL = 200   # an oops with its header, two stacks and the panic line
# the guest's first line, printed before anything of ours runs: a guest
# that dies (vng's 255) without it died while its kernel booted. Under
# TCG a boot can die of the stale-code fault that docs/LIMITS.md
# describe (an int3 left by a jump label the kernel flipped while another
# vCPU ran it; seen on 2026-11-25, a boot of 6.18 dead in sched_clock_cpu
# at 1.9 s); such a boot is tried again, BOOT_TRIES in all. A guest that
# dies after the line is never retried: our code may have caused it.
GUEST_UP = "afcd-testbed: guest up"
BOOT_TRIES = 2
# seconds from vng's start to GUEST_UP: a boot under TCG takes 10-40 s
# on the machines of docs/TESTING.md; a guest kernel that hangs
# silently while booting (the same fault, spinning instead of panicking)
# is killed after this and booted again as a dead one is
BOOT_TIMEOUT_S = 300
# what in the guest kernel's messages is worth showing even when the VM
# exits 0
KERNEL_TROUBLE = re.compile(r"Kernel panic|Oops|BUG:|WARNING:|Call Trace|hung_task")


def vm_exec(argv, rwdirs, timeout_s, want_kernel=None, wire_mbit=None):
    """Re-run argv (afcd-testbed's arguments) inside a virtme-ng VM booted
    from the kernel want_kernel names (vm_kernel()), with rwdirs writable;
    the command's output relayed. The guest kernel's messages of level
    warning and above are kept aside, and the last GUEST_KERNEL_TAIL of
    them printed when the VM timed out or died (a guest that panics leaves
    vng without the command's exit code: 255) or the kernel reported
    trouble (an oops, a BUG, a WARNING); AFCD_VM_VERBOSE=1 relays them as
    they come. A guest that dies while its kernel boots, before the command
    starts (GUEST_UP), is booted again. With wire_mbit (Mbit/s) the guest
    has the wire's two NICs, carrying wire_mbit from one to the other
    (testbed/wire.py), and what the wire carried is printed at the end.
    Returns the exit code, 124 after timeout_s (each boot has its own)."""
    kernel = vm_kernel(want_kernel)
    vng = shutil.which("vng")
    if not kernel or not vng:
        subprocess.run([os.path.join(ROOT, "tools", "deps.sh"), "--vm"], check=True)
        kernel, vng = vm_kernel(want_kernel), shutil.which("vng")
    if not kernel or not vng:
        sys.exit("afcd-testbed: need Debian's Linux %s in /boot and virtme-ng "
                 "(tools/deps.sh --vm)" % (want_kernel or VM_KERNEL_DEFAULT))
    inner = ("echo '%s'; set -e; mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf; "
             "for m in %s; do modprobe -q $m 2>/dev/null || true; done; "
             "cd %s; export MPLCONFIGDIR=/tmp AFCD_WIRE_MBIT=%g; "
             "AFCD_IN_VM=1 /usr/bin/python3 -m testbed %s "
             "--vm never" % (GUEST_UP, " ".join(VM_MODULES), ROOT, wire_mbit or 0,
              " ".join("'%s'" % a.replace("'", "'\\''") for a in argv)))
    # --verbose puts the kernel's console beside the command's output;
    # loglevel=5 keeps the warnings, errors, oopses and panics of it
    cmd = [vng, "--verbose", "-r", kernel, "--cpus", "2", "--memory", "2G",
           "--append", "tsc=reliable clocksource=tsc loglevel=5"]
    if os.environ.get("AFCD_VM_KVM") != "1":
        cmd.insert(1, "--disable-kvm")
    for d in rwdirs:
        os.makedirs(d, exist_ok=True)
        cmd += ["--rwdir", os.path.abspath(d)]
    if wire_mbit:
        # QEMU is run through wire.py, which hands it the wire's sockets
        cmd += ["--qemu", os.path.join(ROOT, "testbed", "wire.py")]
    cmd += ["--", inner]
    say("afcd-testbed: this kernel (%s) lacks sch_fq/netem: running in a VM (%s, %s)" %
        (os.uname().release, os.path.basename(kernel),
         "KVM" if os.environ.get("AFCD_VM_KVM") == "1" else "TCG"))
    for boot in range(1, BOOT_TRIES + 1):
        w = wire.Wire(wire_mbit) if wire_mbit else None
        try:
            rc, up = _boot(cmd, timeout_s, w.env() if w else {})
        finally:
            if w:
                say("afcd-testbed: the wire (%g Mbit/s) carried %s" %
                    (wire_mbit, json.dumps(w.stop(), sort_keys=True)))
        if up or (rc != 255 and rc != 124) or boot == BOOT_TRIES:
            return rc
        say("afcd-testbed: the guest kernel %s while booting, before the command ran "
            "(TCG: see docs/LIMITS.md); booting again (%d of %d)" %
            ("died" if rc == 255 else "hung", boot + 1, BOOT_TRIES))
    return rc


def _kill(p):
    """SIGKILL to vng's process group: vng, qemu and virtiofsd (qemu
    holds the console's pipe open after vng is gone)."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _on_term(signum, frame):
    raise SystemExit(128 + signum)


def _watch(p, timeout_s, up, fired):
    """Kill p's group once it has run timeout_s, or BOOT_TIMEOUT_S without
    GUEST_UP (up is set); fired is set when it did. Runs beside the
    console's reader, which a silent guest would block forever."""
    t0 = time.monotonic()
    while p.poll() is None:
        age = time.monotonic() - t0
        if age > timeout_s or (age > BOOT_TIMEOUT_S and not up.is_set()):
            fired.set()
            _kill(p)
            return
        time.sleep(0.2)


def _boot(cmd, timeout_s, env=None):
    """Boot the VM of cmd once and relay its console (vm_exec()); returns
    the exit code (124 after timeout_s, or BOOT_TIMEOUT_S without
    GUEST_UP) and whether the guest's command started (it printed
    GUEST_UP, which is not relayed)."""
    # relay the VM's console through a pipe: qemu may reopen or truncate a
    # stdout that is a file (CI logs), losing what was printed before.
    # vng leads its own process group, so that a timeout kills qemu too
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors="replace",
                         start_new_session=True, env=dict(os.environ, **(env or {})))
    verbose = os.environ.get("AFCD_VM_VERBOSE") == "1"
    klog = collections.deque(maxlen=GUEST_KERNEL_TAIL)
    trouble, up, fired = False, threading.Event(), threading.Event()
    threading.Thread(target=_watch, args=(p, timeout_s, up, fired), daemon=True).start()
    # a SIGTERM to the testbed (kill, timeout(1), systemd) ends it through
    # the except below, as an interrupt does, so that its VM goes with it
    old_term = (signal.signal(signal.SIGTERM, _on_term)
                if threading.current_thread() is threading.main_thread() else None)
    try:
        for line in p.stdout:
            if GUEST_UP in line:
                up.set()
                if line.strip() == GUEST_UP:
                    continue
            if KERNEL_LINE.match(line) and not verbose:
                klog.append(line)
                trouble |= bool(KERNEL_TROUBLE.search(line))
            else:
                sys.stdout.write(line)
                sys.stdout.flush()
    except BaseException:
        _kill(p)                # interrupted: no qemu left behind
        raise
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
    rc = p.wait()
    if fired.is_set():
        rc = 124
        say("afcd-testbed: the VM did not %s within %d s; killed" %
            (("finish", timeout_s) if up.is_set() else
             ("start its command", min(timeout_s, BOOT_TIMEOUT_S))))
    if klog and (rc in (124, 255) or trouble):
        say("afcd-testbed: the VM exited %d%s; the guest kernel's last messages:" %
            (rc, " and its kernel reported trouble" if trouble else ""))
        sys.stdout.write("".join(klog))
        sys.stdout.flush()
    return rc, up.is_set()
