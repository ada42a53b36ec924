# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The Debian package as an operator uses it: built from the tree by
`make deb` (dpkg-buildpackage and lintian), installed on this machine,
run from /usr/sbin on a veth in a namespace, removed and purged, leaving
nothing behind; and the Grafana dashboard's queries against what /metrics
serves."""
import glob
import json
import os
import re
import subprocess
import time

from testbed import netns as nslib
from testbed.netns import in_ns, start_loader, stop

ROOT = nslib.ROOT


def _sh(*cmd, check=True, timeout=600):
    return subprocess.run(list(cmd), capture_output=True, text=True, check=check,
                          timeout=timeout, cwd=ROOT)


def _installed(pkg):
    r = _sh("dpkg-query", "-W", "-f", "${Status}", pkg, check=False)
    return "install ok installed" in r.stdout


def test_package_installs_runs_and_purges_clean(pair):
    """Expected result: `make deb` builds afcd_VERSION_amd64.deb with no
    lintian error or warning; it holds the binary, the tools, the unit (not
    enabled), the examples in /etc/afcd, the manual pages and the
    completion; installed with apt, /usr/sbin/afcd attaches to a veth in a
    namespace and `afcd stats` reads it; after `apt purge` no file of the
    package, no /etc/afcd and no pin is left."""
    if _installed("afcd"):
        import pytest
        pytest.skip("an afcd package is installed on this machine: not touching it")
    r = _sh("make", "--no-print-directory", "deb", timeout=900, check=False)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    version = open(os.path.join(ROOT, "VERSION")).read().strip()
    debs = glob.glob(os.path.join(ROOT, "build", "deb", "afcd_%s_*.deb" % version))
    assert len(debs) == 1, debs
    files = _sh("dpkg-deb", "-c", debs[0]).stdout
    for f in ("./usr/sbin/afcd", "./usr/sbin/afcd-top", "./usr/sbin/afcd-trace",
              "./lib/systemd/system/afcd@.service", "./etc/afcd/example.conf",
              "./usr/share/man/man8/afcd.8.gz", "./usr/share/man/man5/afcd.conf.5.gz",
              "./usr/share/man/man8/afcd-top.8.gz",
              "./usr/share/bash-completion/completions/afcd"):
        assert f in files, f
    a, _ = pair
    try:
        r = _sh("apt-get", "install", "-y", "-q", "--no-install-recommends", debs[0],
                check=False)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
        assert _installed("afcd")
        unit = open("/lib/systemd/system/afcd@.service").read()
        assert "ExecStart=/usr/sbin/afcd attach" in unit
        assert not os.path.exists("/etc/systemd/system/multi-user.target.wants/afcd@.service")
        assert "abi " in _sh("/usr/sbin/afcd", "version").stdout
        p = subprocess.Popen(nslib.ns_cmd(a, ["/usr/sbin/afcd", "attach", "v0", "rate",
                                              "10mbit", "--skip-fq-check"]),
                             stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        try:
            s = None
            for _ in range(100):
                r = in_ns(a, ["/usr/sbin/afcd", "stats", "v0", "-j", "--dt", "0"], check=False)
                if r.returncode == 0:
                    s = json.loads(r.stdout)
                    if s["estimates"]["refreshes"] > 0:
                        break
                time.sleep(0.1)
            assert s and s["config"]["rate_bps"] == 10_000_000, s
            in_ns(a, ["ping", "-c", "2", "-i", "0.2", "198.18.0.2"])
            top = subprocess.run(nslib.ns_cmd(a, ["/usr/sbin/afcd-top", "v0", "-n", "1",
                                                  "--plain"]),
                                 capture_output=True, text=True, timeout=60)
            assert top.returncode == 0 and "afcd-top  dev v0" in top.stdout, top.stderr
        finally:
            assert stop(p) == 0
    finally:
        _sh("apt-get", "purge", "-y", "-q", "afcd", check=False)
    assert not _installed("afcd")
    for f in re.findall(r"\./(\S+)", files):
        path = "/" + f
        assert not os.path.isfile(path), path
    assert not os.path.exists("/etc/afcd")
    assert nslib.pins() == []


def test_dashboard_queries_what_metrics_serves(pair):
    """Expected result: every afcd_* metric the Grafana dashboard queries is
    a family that a running loader's /metrics serves (dev, and reason or
    kind labels as the dashboard groups by them)."""
    a, _ = pair
    port = 9850 + os.getpid() % 100
    p = start_loader(a, "v0", "rate", "10mbit", "--skip-fq-check", "--prometheus", port)
    try:
        in_ns(a, ["ip", "link", "set", "lo", "up"])
        body = in_ns(a, ["python3", "-c", "import urllib.request as u; print(u.urlopen("
                     "'http://127.0.0.1:%d/metrics', timeout=5).read().decode())" % port]).stdout
    finally:
        stop(p)
    served = {line.split()[2] for line in body.splitlines() if line.startswith("# TYPE")}
    with open(os.path.join(ROOT, "deploy", "grafana", "afcd.json")) as fh:
        d = json.load(fh)
    exprs = [t["expr"] for pnl in d["panels"] for t in pnl.get("targets", [])]
    exprs += [v["query"]["query"] for v in d["templating"]["list"]
              if isinstance(v.get("query"), dict)]
    queried = {m for e in exprs for m in re.findall(r"\b(afcd_\w+)", e)}
    assert len(queried) >= 12, queried
    assert queried <= served, queried - served
    for label in ("reason", "kind"):
        for m in re.findall(r"by \(dev, %s\) \(rate\((afcd_\w+)" % label, " ".join(exprs)):
            assert re.search(r'^%s\{dev="v0",%s=' % (m, label), body, re.M), (m, label)
