# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The VM runner's console relay (testbed/vm.py vm_exec()): the guest
kernel's messages are kept aside and shown only when the VM died, timed
out or the kernel reported trouble, so that a guest that panics in CI
leaves its reason in the log instead of a bare exit code 255."""
import io
import os
import subprocess
import time

import pytest

from testbed import vm

CONSOLE = """virtme: waiting for virtiofsd to start
[    0.000000] Linux version 6.18.15+deb13-amd64
afcd-testbed: guest up
{"result": 1}
[   21.463266]  ksys_write+0x6b/0xe0
line from the command
"""


class _Proc:
    def __init__(self, rc):
        self.stdout = io.StringIO(CONSOLE)
        self.rc = rc

    pid = None

    def wait(self):
        return self.rc

    def poll(self):
        return self.rc

    def kill(self):
        pass


def _run(monkeypatch, capsys, rc, console=CONSOLE):
    """vm_exec() over one boot that prints console and exits rc; returns
    vm_exec()'s code, the output and vng's command line."""
    got, out, _, cmds = _boots(monkeypatch, capsys, [(console, rc)])
    return got, out, cmds[0]


def test_kernel_lines_held_back_when_the_command_exits(monkeypatch, capsys):
    """Expected result: exit 3 with a quiet kernel: the command's lines
    relayed, the kernel's and virtme's not; vng runs verbose with
    loglevel=5."""
    rc, out, cmd = _run(monkeypatch, capsys, 3)
    assert rc == 3
    assert '{"result": 1}' in out and "line from the command" in out
    assert "Linux version" not in out and "virtiofsd" not in out and "guest up" not in out
    assert "--verbose" in cmd and any("loglevel=5" in a for a in cmd)


def test_kernel_tail_shown_when_the_guest_dies(monkeypatch, capsys):
    """Expected result: vng's 255 (no exit code: the guest panicked) shows
    the kernel's messages after the command's output."""
    rc, out, _ = _run(monkeypatch, capsys, 255)
    assert rc == 255
    assert "the guest kernel's last messages" in out and "died while booting" not in out
    assert out.index("ksys_write") > out.index("line from the command")


def test_kernel_trouble_shown_even_on_success(monkeypatch, capsys):
    """Expected result: a WARNING in the guest kernel is shown although the
    command exited 0."""
    rc, out, _ = _run(monkeypatch, capsys, 0,
                      CONSOLE + "[   30.100000] WARNING: CPU: 1 PID: 7 at net/sched/sch_api.c:1\n")
    assert rc == 0
    assert "reported trouble" in out and "WARNING: CPU: 1" in out


def test_script_lines_that_look_timed_are_relayed(monkeypatch, capsys):
    """Expected result: a command's own "[1.5] ..." line is relayed (only
    printk's six-decimal prefix marks a kernel line), and a kernel line
    with CONFIG_PRINTK_CALLER's "[    T1]" is still held back."""
    rc, out, _ = _run(monkeypatch, capsys, 0,
                      CONSOLE + "[1.5] flips 100\n[    2.000001][    T1] Run /init\n")
    assert rc == 0
    assert "[1.5] flips 100" in out and "Run /init" not in out


BOOT_PANIC = """virtme: waiting for virtiofsd to start
[    1.884873] Oops: int3: 0000 [#1] SMP NOPTI
[    1.885840] RIP: 0010:sched_clock_cpu+0x9/0x1f0
[    1.890165] Kernel panic - not syncing: Fatal exception in interrupt
"""


def _boots(monkeypatch, capsys, consoles):
    """vm_exec() over a VM whose boots print consoles[i] and exit with
    its code, in turn; returns vm_exec()'s code, the output, the number
    of boots and vng's command lines."""
    monkeypatch.setattr(vm, "vm_kernel", lambda want=None: "/boot/vmlinuz-6.18.15+deb13-amd64")
    monkeypatch.setattr(vm.shutil, "which", lambda name: "/usr/local/bin/vng")
    boots = []

    def popen(cmd, **kw):
        text, rc = consoles[len(boots)]
        boots.append(cmd)
        p = _Proc(rc)
        p.stdout = io.StringIO(text)
        return p
    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.delenv("AFCD_VM_VERBOSE", raising=False)
    rc = vm.vm_exec(["script", "x.py"], [], 60)
    return rc, capsys.readouterr().out, len(boots), boots


def test_a_guest_dead_while_booting_is_booted_again(monkeypatch, capsys):
    """Expected result: a guest kernel that panics before the command's
    first line (vng's 255) is booted again, saying so, and the second
    boot's exit code is returned; the marker line itself is not relayed."""
    rc, out, n, _ = _boots(monkeypatch, capsys, [
        (BOOT_PANIC, 255), (vm.GUEST_UP + "\n" + '{"result": 1}\n', 0)])
    assert (rc, n) == (0, 2)
    assert "died while booting" in out and "sched_clock_cpu" in out
    assert '{"result": 1}' in out and vm.GUEST_UP not in out


def test_a_guest_dead_after_the_command_began_is_not_retried(monkeypatch, capsys):
    """Expected result: a panic after the command's first line (ours may
    have caused it) fails at once with 255 and its kernel messages."""
    rc, out, n, _ = _boots(monkeypatch, capsys, [
        (vm.GUEST_UP + "\n" + BOOT_PANIC, 255), ("", 0)])
    assert (rc, n) == (255, 1)
    assert "died while booting" not in out and "Fatal exception" in out


def test_booting_is_tried_twice_at_most(monkeypatch, capsys):
    """Expected result: two boots that die both fail, with 255."""
    rc, out, n, _ = _boots(monkeypatch, capsys, [(BOOT_PANIC, 255)] * 3)
    assert (rc, n) == (255, vm.BOOT_TRIES)


def _alive(pid):
    """Is pid still running (not gone, not a zombie), 0.2 s after its
    group was killed?"""
    time.sleep(0.2)
    try:
        with open("/proc/%d/stat" % pid) as fh:
            return fh.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_a_silent_guest_is_killed_at_its_timeout(capsys):
    """Expected result: a VM whose command started and then prints nothing
    (a hung guest) is killed at timeout_s, though no line arrives to
    wake the console's reader: exit 124, said so, and the process that
    held the console open (qemu's place) killed with its group."""
    t0 = time.monotonic()
    rc, up = vm._boot(["sh", "-c", "echo '%s'; sleep 60 & echo $!; wait" % vm.GUEST_UP], 1.5)
    took = time.monotonic() - t0
    out = capsys.readouterr().out
    assert (rc, up) == (124, True) and took < 20, (rc, up, took)
    assert "did not finish within 1 s" in out
    child = int(out.split()[0])
    assert not _alive(child), "the console's holder outlived the timeout"


def test_a_guest_silent_while_booting_is_booted_again(monkeypatch, capsys):
    """Expected result: a boot that prints nothing for BOOT_TIMEOUT_S (a
    guest kernel that hangs before the command) is killed and booted
    again, saying so; the second boot's exit code is returned."""
    monkeypatch.setattr(vm, "vm_kernel", lambda want=None: "/boot/vmlinuz-6.18.15+deb13-amd64")
    monkeypatch.setattr(vm.shutil, "which", lambda name: "/usr/local/bin/vng")
    monkeypatch.setattr(vm, "BOOT_TIMEOUT_S", 1)
    boots = []
    real = subprocess.Popen

    def popen(cmd, **kw):
        boots.append(cmd)
        sh = "sleep 60" if len(boots) == 1 else "echo '%s'; echo done" % vm.GUEST_UP
        return real(["sh", "-c", sh], **kw)
    monkeypatch.setattr(subprocess, "Popen", popen)
    t0 = time.monotonic()
    rc = vm.vm_exec(["script", "x.py"], [], 60)
    out = capsys.readouterr().out
    assert (rc, len(boots)) == (0, 2) and time.monotonic() - t0 < 30
    assert "did not start its command within 1 s" in out and "hung while booting" in out
    assert "done" in out


@pytest.mark.parametrize("argv", [["reproduce", "4.3", "--mode", "quick", "--rate", "20"],
                                  ["demo"]])
def test_a_dead_vm_s_runs_run_once_more(monkeypatch, tmp_path, argv):
    """Expected result: `reproduce` or `demo` whose VM dies (255) or
    hangs (124) boots one more VM with --resume (the finished runs kept),
    and no third; the second VM's exit code is returned."""
    from testbed import cli, reproduce
    for first, second, boots in ((255, 0, 2), (124, 255, 2), (0, 0, 1), (1, 0, 1)):
        calls = []

        def fake_exec(argv, rwdirs, timeout_s, kernel=None, wire=None):
            calls.append(list(argv))
            return (first, second)[len(calls) - 1]
        monkeypatch.setattr(cli, "vm_exec", fake_exec)
        monkeypatch.setattr(cli, "need_vm", lambda args: True)
        monkeypatch.setattr(cli, "qdisc_kernel", lambda: None)
        monkeypatch.setattr(cli, "make_plots", lambda *a, **k: [])
        monkeypatch.setattr(cli, "load_results", lambda *a, **k: [])
        monkeypatch.setattr(reproduce, "judge_all", lambda *a, **k: None)
        monkeypatch.setattr(cli.nslib, "AFCD", "/bin/sh")
        monkeypatch.setattr(cli.os, "geteuid", lambda: 0)
        monkeypatch.setattr(cli.sys, "argv", ["afcd-testbed"] + argv + ["--out", str(tmp_path)])
        rc = cli.main()
        assert len(calls) == boots, (first, calls)
        assert rc == (second if boots == 2 else first)
        assert "--resume" not in calls[0]
        if boots == 2:
            assert calls[1] == calls[0] + ["--resume"]


def test_a_terminated_testbed_takes_its_vm_with_it(tmp_path):
    """Expected result: SIGTERM to a process relaying a VM's console
    (kill, timeout(1), systemd stopping it) kills the VM's process group
    too: the child that held the console open is gone, and the process
    exits 143 (vng leads its own session, so the signal would not reach
    it otherwise)."""
    import signal
    import sys
    code = ("import sys; sys.path.insert(0, %r); from testbed import vm; "
            "vm._boot(['sh', '-c', 'echo %s; sleep 60 & echo $!; wait'], 60)" %
            (os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
             vm.GUEST_UP))
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child = int(p.stdout.readline())
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=20) == 143
    assert not _alive(child), "the VM's group outlived the testbed"
