# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The lists of maps/afcd_maps.h (pins, algos, counters) drive every output:
what `afcd stats -j`, /metrics, `afcd params` and the pins on bpffs show
must be exactly those lists, as testbed.abi reads them from the header."""
import os

from testbed import abi
from testbed import netns as nslib
from testbed.netns import afcd, afcd_stats, in_ns, start_loader, stop


def test_outputs_follow_the_lists(pair):
    """Expected result: stats -j has one key per counter of each list (queue:
    AFCD_STATS + AFCD_ASTATS, global: AFCD_GSTATS, in order); /metrics has
    one family per distinct family of those lists; the pins are the pin
    list; `afcd params` offers the algo list."""
    a, _ = pair
    p = start_loader(a, "v0", "rate", "10mbit", "--skip-fq-check", "--prometheus", "9111")
    try:
        in_ns(a, ["ip", "link", "set", "lo", "up"])
        s = afcd_stats(a, "v0", flows=False, dt=0)
        qkeys = [k for k in s["queue"]]
        want = [k for k, _, _, _ in abi.STATS + abi.ASTATS]
        assert qkeys[:len(want)] == want
        assert list(s["global"]) == [k for k, _, _, _ in abi.GSTATS]
        assert list(s["queue"]["aggregates"]) == abi.AGGS
        assert s["config"]["algo"] in abi.ALGOS
        # the maps, and the tcx link's pin where the loader attached with tcx
        maps = [n for n in os.listdir(nslib.PIN_DIR) if not n.startswith("afcd_tcx_")]
        assert sorted(maps) == sorted(abi.PIN_NAMES)
        body = in_ns(a, ["python3", "-c", "import urllib.request as u; print(u.urlopen("
                     "'http://127.0.0.1:9111/metrics', timeout=5).read().decode())"]).stdout
        fams = {line.split()[2][len("afcd_"):] for line in body.splitlines()
                if line.startswith("# TYPE")}
        want_fams = {f for _, f, _, _ in abi.STATS + abi.ASTATS if f}
        assert want_fams <= fams, want_fams - fams
        for _, fam, label, _ in abi.STATS + abi.ASTATS:
            if fam:
                assert ('afcd_%s{dev="v0"%s' % (fam, "," + label if label else "")) in body
        params = afcd(a, "params").stdout
        algo_line = next(l for l in params.splitlines() if l.split()[:1] == ["algo"])
        laws = algo_line.split("): ", 1)[1].split("; ")
        named = [law.split(":")[0] for law in laws]
        assert named == abi.ALGOS, (named, algo_line)
    finally:
        assert stop(p) == 0


def test_foreign_pin_refused(pair):
    """Expected result: a pin replaced by a map of another shape (another
    version's afcd_est: value 8 bytes) is refused by name, with the shape it
    has and the one expected; nothing is read from or written to it."""
    a, _ = pair
    p = start_loader(a, "v0", "rate", "10mbit", "--skip-fq-check", "--keep")
    assert stop(p) == 0
    path = os.path.join(nslib.PIN_DIR, "afcd_est")
    os.unlink(path)
    nslib.sh(["bpftool", "map", "create", path, "type", "array", "key", "4", "value", "8",
              "entries", "4", "name", "afcd_est"])
    for args in (["stats", "v0"], ["set", "v0", "rate", "5mbit"]):
        r = afcd(a, *args, check=False)
        assert r.returncode == 1, (args, r.stdout, r.stderr)
        assert "afcd_est is not a map of this afcd" in r.stderr, r.stderr
        assert "value 8 bytes" in r.stderr
    # a broken set is left alone by detach (it may be another version's in
    # use): this test broke it, so it removes it, or every later run of a
    # build with another layout would find these pins and be refused
    afcd(a, "detach", "v0")
    for name in nslib.pins():
        os.unlink(os.path.join(nslib.PIN_DIR, name))
