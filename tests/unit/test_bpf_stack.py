"""The BPF objects' stack, read from their code: every chain of calls from
a program's entry fits the 512 bytes the verifier allows a chain, each
frame rounded up to 32 bytes as Linux 6.1 rounds it (check_max_stack_depth()
in kernel/bpf/verifier.c). Newer kernels measure the frames more finely and
accept more, so a chain over the bound loads on the host and fails on
Debian 12's kernel: this test fails first. Needs the objects (make all)."""
import glob
import os
import re
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OBJS = sorted(glob.glob(os.path.join(ROOT, "build", "*.bpf.o")))
STACK_MAX = 512
FRAME_ROUND = 32

FUNC = re.compile(r"^[0-9a-f]+ <([A-Za-z_][A-Za-z0-9_]*)>:$")
SECTION = re.compile(r"^Disassembly of section (\S+):$")
STACK = re.compile(r"\(?r10 - (\d+)\)?")
CALLEE = re.compile(r"R_BPF_64_32\s+(\S+)")


LDIMM = re.compile(r"= (\d+) ll$")
TEXT_REF = re.compile(r"R_BPF_64_64\s+\.text$")
FUNC_AT = re.compile(r"^([0-9a-f]+) <([A-Za-z_][A-Za-z0-9_]*)>:$")


def frames_and_calls(obj):
    """{function: (section, frame bytes, [callees])} of one object. A
    callee is a function called, or one whose address a function loads (a
    callback: bpf_loop()'s runs on the loader's stack chain)."""
    out = subprocess.run(["llvm-objdump", "-dr", "--no-show-raw-insn", obj], check=True,
                         capture_output=True, text=True).stdout
    funcs, section, cur, pending_call, ldimm = {}, None, None, False, None
    text_at, refs = {}, []
    for line in out.splitlines():
        line = line.strip()
        m = SECTION.match(line)
        if m:
            section = m.group(1)
            continue
        m = FUNC.match(line)
        if m and not m.group(1).startswith("LBB"):    # a label inside a function
            cur = m.group(1)
            funcs.setdefault(cur, [section, 0, []])
            if section == ".text":
                text_at[int(FUNC_AT.match(line).group(1), 16)] = cur
            continue
        if cur is None:
            continue
        if pending_call:
            m = CALLEE.search(line)
            if m:
                funcs[cur][2].append(m.group(1))
            pending_call = False
        if ldimm is not None and TEXT_REF.search(line):
            refs.append((cur, ldimm))
        m = LDIMM.search(line)
        ldimm = int(m.group(1)) if m else None
        if re.search(r"\tcall -1$|\bcall -1$", line):
            pending_call = True
        for d in STACK.findall(line):
            funcs[cur][1] = max(funcs[cur][1], int(d))
    for caller, off in refs:
        if off in text_at:
            funcs[caller][2].append(text_at[off])
    return funcs


def chain_depth(funcs, f, seen=()):
    """The deepest stack of a chain from f: its frame (rounded) and its
    deepest callee's chain."""
    assert f not in seen, "recursion through %s" % f
    _, frame, callees = funcs[f]
    rounded = -(-max(frame, 1) // FRAME_ROUND) * FRAME_ROUND
    return rounded + max([chain_depth(funcs, c, seen + (f,)) for c in callees if c in funcs],
                         default=0)


@pytest.mark.skipif(not OBJS or not shutil.which("llvm-objdump"),
                    reason="no BPF objects (make all) or no llvm-objdump")
@pytest.mark.parametrize("obj", OBJS, ids=[os.path.basename(o) for o in OBJS])
def test_every_call_chain_fits_the_stack_of_linux_6_1(obj):
    """Expected result: for each program (a function outside .text), the
    rounded frames of its deepest chain of calls add up to at most 512
    bytes."""
    funcs = frames_and_calls(obj)
    progs = [f for f, (sec, _, _) in funcs.items() if sec != ".text"]
    assert progs, "no programs found in %s" % obj
    for p in progs:
        depth = chain_depth(funcs, p)
        assert depth <= STACK_MAX, "%s: %s's deepest call chain takes %d bytes of stack" % (
            os.path.basename(obj), p, depth)
