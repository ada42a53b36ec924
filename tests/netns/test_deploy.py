# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The systemd unit (deploy/systemd/afcd@.service): it passes
`systemd-analyze verify` without a warning, the loader needs no system
call outside its SystemCallFilter and no address family outside
RestrictAddressFamilies (strace of a real run), and it works with exactly
its CapabilityBoundingSet and is refused cleanly with less."""
import os
import re
import shutil
import subprocess

import pytest

from testbed import netns as nslib
from testbed.netns import afcd, afcd_stats, in_ns, start_loader, stop, tc_state

UNIT = os.path.join(nslib.ROOT, "deploy", "systemd", "afcd@.service")
EXAMPLE_CONF = os.path.join(nslib.ROOT, "deploy", "systemd", "example.conf")


def unit_items():
    """The unit's "Key=value" lines: {key: [value, ...]}."""
    items = {}
    with open(UNIT) as fh:
        for line in fh:
            m = re.match(r"^([A-Za-z]+)=(.*)$", line.strip())
            if m:
                items.setdefault(m.group(1), []).append(m.group(2))
    return items


def syscall_set(names, seen=None):
    """System calls of a SystemCallFilter list: @groups resolved (nested
    too) by systemd-analyze syscall-filter."""
    seen = set() if seen is None else seen
    out = set()
    for n in names:
        if not n.startswith("@"):
            out.add(n)
            continue
        if n in seen:
            continue
        seen.add(n)
        text = nslib.sh(["systemd-analyze", "syscall-filter", n]).stdout
        members = [l.strip() for l in text.splitlines()[1:]
                   if l.startswith("    ") and not l.strip().startswith("#")]
        out |= syscall_set(members, seen)
    return out


def setpriv(caps):
    """Run with exactly these capabilities (root: bounding set = permitted)."""
    return ["setpriv", "--bounding-set=-all," + ",".join("+" + c for c in caps),
            "--inh-caps=-all"]


def unit_caps():
    return [c[len("CAP_"):].lower() for c in unit_items()["CapabilityBoundingSet"][0].split()]


def test_unit_passes_systemd_analyze_verify(tmp_path):
    if not shutil.which("systemd-analyze"):
        pytest.skip("no systemd-analyze (Debian's systemd package)")
    # the same unit, started from this checkout's build instead of /usr/local
    with open(UNIT) as fh:
        text = fh.read().replace("/usr/local/sbin/afcd", nslib.AFCD)
    (tmp_path / "afcd@.service").write_text(text)
    os.symlink("afcd@.service", tmp_path / "afcd@eth1.service")
    r = subprocess.run(["systemd-analyze", "verify", "--man=no",
                        str(tmp_path / "afcd@eth1.service")], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr
    it = unit_items()
    assert it["Restart"] == ["on-failure"]
    assert "--config /etc/afcd/%I.conf" in it["ExecStart"][0]


def test_loader_stays_inside_the_units_syscall_filter(pair, tmp_path):
    """Every system call and socket family of attach (with /metrics),
    stats and detach is one the unit allows."""
    if not shutil.which("strace"):
        pytest.skip("no strace")
    a, b = pair
    it = unit_items()
    allowed = syscall_set(it["SystemCallFilter"][0].split())
    families = set(it["RestrictAddressFamilies"][0].split())
    trace = tmp_path / "st"
    for i, args in enumerate((["attach", "v0", "-c", EXAMPLE_CONF, "--skip-fq-check",
                               "--duration", "1s", "--prometheus", "9112", "--keep"],
                              ["stats", "v0", "--flows"], ["detach", "v0"])):
        in_ns(a, ["strace", "-f", "-qq", "-o", "%s.%d" % (trace, i), nslib.AFCD] + args)
    used, fams = set(), set()
    for i in range(3):
        for line in open("%s.%d" % (trace, i)):
            m = re.match(r"^\d+\s+([a-z0-9_]+)\(", line)
            if m:
                used.add(m.group(1))
            m = re.match(r"^\d+\s+socket\((AF_[A-Z0-9]+)", line)
            if m:
                fams.add(m.group(1))
    assert "bpf" in used and "AF_NETLINK" in fams       # the trace saw the real work
    assert used - {"execve"} <= allowed, sorted(used - allowed)
    assert fams <= families, fams


def test_unit_capabilities_are_enough_and_less_is_refused(pair):
    a, b = pair
    caps = unit_caps()
    assert sorted(caps) == ["net_admin", "sys_admin"]
    before = tc_state(a, "v0")
    args = ["-c", EXAMPLE_CONF, "--skip-fq-check"]
    p = start_loader(a, "v0", *args, wrap=setpriv(caps))
    try:
        s = afcd_stats(a, "v0", flows=False, dt=0)
        assert s["config"]["algo"] == "fall" and s["config"]["rate_bps"] == 900_000_000
        assert s["hook"] == nslib.default_hook() and s["estimates"]["loader_fresh"]
        r = in_ns(a, setpriv(caps) + [nslib.AFCD, "stats", "v0"], check=False)
        assert r.returncode == 0, r.stderr
    finally:
        assert stop(p) == 0
    assert tc_state(a, "v0") == before and nslib.pins() == []
    for less in (["bpf", "perfmon", "net_admin"], ["bpf", "perfmon", "sys_admin"]):
        r = in_ns(a, setpriv(less) + [nslib.AFCD, "attach", "v0"] + args, check=False)
        missing = "CAP_SYS_ADMIN" if "sys_admin" not in less else "CAP_NET_ADMIN"
        assert r.returncode == 1 and ("lacks " + missing) in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert tc_state(a, "v0") == before and nslib.pins() == []


K8S = os.path.join(nslib.ROOT, "deploy", "kubernetes")


def k8s_docs():
    yaml = pytest.importorskip("yaml")
    docs = {}
    for name in sorted(os.listdir(K8S)):
        if name.endswith(".yaml"):
            with open(os.path.join(K8S, name)) as fh:
                for d in yaml.safe_load_all(fh):
                    docs[d["kind"]] = d
    return docs


def test_kubernetes_manifests_validate_against_the_schema():
    """deploy/kubernetes: every manifest is valid for the
    newest Kubernetes schema kubernetes-validate carries (strict: no
    unknown fields), and the DaemonSet matches the unit and the ConfigMap."""
    kv = pytest.importorskip("kubernetes_validate")
    docs = k8s_docs()
    assert set(docs) == {"ConfigMap", "DaemonSet"}
    for kind, d in docs.items():
        kv.validate(d, kv.latest_version(), strict=True)      # raises when invalid
    ds, cm = docs["DaemonSet"], docs["ConfigMap"]
    pod = ds["spec"]["template"]
    c = pod["spec"]["containers"][0]
    assert pod["spec"]["hostNetwork"] is True
    sc = c["securityContext"]
    assert sc["capabilities"]["drop"] == ["ALL"] and not sc["privileged"]
    assert sorted(x.lower() for x in sc["capabilities"]["add"]) == sorted(unit_caps())
    # Prometheus scrapes the port the loader serves
    ann = pod["metadata"]["annotations"]
    assert ann["prometheus.io/scrape"] == "true" and ann["prometheus.io/path"] == "/metrics"
    assert "--prometheus %s " % ann["prometheus.io/port"] in c["args"][0]
    assert c["ports"][0]["containerPort"] == int(ann["prometheus.io/port"])
    # the ConfigMap names the interface and holds its config
    ref = c["env"][0]["valueFrom"]["configMapKeyRef"]
    assert ref["name"] == cm["metadata"]["name"] and ref["key"] in cm["data"]
    assert cm["data"][ref["key"]] + ".conf" in cm["data"]


def test_kubernetes_config_is_one_afcd_reads(pair, tmp_path):
    a, _ = pair
    cm = k8s_docs()["ConfigMap"]
    conf = tmp_path / "dev.conf"
    conf.write_text(cm["data"][cm["data"]["dev"] + ".conf"])
    r = afcd(a, "attach", "v0", "-c", str(conf), "--skip-fq-check", "--duration", "300ms",
             check=False)
    assert r.returncode == 0, r.stderr
    assert nslib.pins() == []
