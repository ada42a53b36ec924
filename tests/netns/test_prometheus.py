# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The Grafana dashboard against a real Prometheus: Debian's prometheus
server (2.42, the binary tools/deps.sh extracts) scrapes a live `afcd
attach --prometheus` every second while a UDP flood and a TCP transfer
cross the interface, and every PromQL expression of
deploy/grafana/afcd.json, the template variables' label_values()
included, is evaluated through its HTTP API. A panel whose query returns
nothing (a renamed family, a label the exporter does not set, a rate over
a gauge) fails here; the schema check of tests/unit proves nothing about
the queries."""
import json
import os
import re
import shutil
import subprocess
import time

import pytest

from testbed import netns as nslib
from testbed.netns import in_ns, start_loader, stop

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DASHBOARD = os.path.join(ROOT, "deploy", "grafana", "afcd.json")
SCRAPE_S = 1
# Grafana's $__rate_interval is max(4 x scrape interval, the step + scrape)
RATE_INTERVAL = "%ds" % (4 * SCRAPE_S)

QUERY = r"""
import json, sys, urllib.parse, urllib.request
port, exprs = int(sys.argv[1]), json.loads(sys.stdin.read())
out = []
for e in exprs:
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": e}))
    r = json.loads(urllib.request.urlopen(url, timeout=10).read())
    out.append(r)
print(json.dumps(out))
"""


def dashboard_queries():
    """(what, expr) of every panel target and template variable."""
    d = json.load(open(DASHBOARD))
    out = []

    def walk(o, where):
        if isinstance(o, dict):
            if isinstance(o.get("expr"), str):
                out.append(("panel %r" % where, o["expr"]))
            for k, v in o.items():
                walk(v, o.get("title", where))
        elif isinstance(o, list):
            for v in o:
                walk(v, where)
    walk(d.get("panels", []), "")
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            out.append(("variable %s" % v["name"], q))
    return out


def instantiate(expr, dev):
    """The expression as Grafana sends it with All selected and one
    interface: label_values(SEL, L) becomes SEL (the label checked by the
    caller), the variables their values."""
    m = re.fullmatch(r"label_values\((.*),\s*(\w+)\)", expr.strip())
    label = None
    if m:
        expr, label = m.group(1), m.group(2)
    expr = (expr.replace("$__rate_interval", RATE_INTERVAL)
            .replace("$job", ".+").replace("$instance", ".+").replace("$dev", dev))
    assert "$" not in expr, expr
    return expr, label


def query_all(ns, port, exprs):
    r = in_ns(ns, ["/usr/bin/python3", "-c", QUERY, str(port)], input=json.dumps(exprs),
              timeout=60)
    return json.loads(r.stdout)


@pytest.fixture
def prom_dir(tmp_path):
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_dashboard_queries_return_data_from_a_live_scrape(pair, prom_dir):
    """Expected result: with a flood through v0, each of the dashboard's
    expressions returns at least one series for dev v0 (label_values()
    the label it lists), the traffic panel a rate above zero and the drop
    panel the flood's drops."""
    if shutil.which("prometheus") is None:
        pytest.fail("no prometheus server: run tools/deps.sh")
    a, b = pair
    port = 9500 + os.getpid() % 100
    prom_port = port + 100
    queries = dashboard_queries()
    assert len(queries) >= 15, queries
    cfg = prom_dir / "prometheus.yml"
    cfg.write_text("global:\n  scrape_interval: %ds\n  evaluation_interval: %ds\n"
                   "scrape_configs:\n  - job_name: afcd\n    static_configs:\n"
                   "      - targets: ['127.0.0.1:%d']\n" % (SCRAPE_S, SCRAPE_S, port))
    loader = start_loader(a, "v0", "rate", "10mbit", "--skip-fq-check", "--prometheus", port)
    prom = subprocess.Popen(nslib.ns_cmd(a, [
        "prometheus", "--config.file=%s" % cfg, "--storage.tsdb.path=%s" % (prom_dir / "tsdb"),
        "--web.listen-address=127.0.0.1:%d" % prom_port, "--log.level=warn"]),
        stdout=open(prom_dir / "prom.log", "w"), stderr=subprocess.STDOUT)
    srv = subprocess.Popen(nslib.ns_cmd(b, ["iperf3", "-s", "-p", "5201"]),
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 60
        while True:
            assert prom.poll() is None, (prom_dir / "prom.log").read_text()
            try:
                up = query_all(a, prom_port, ['up{job="afcd"}'])[0]["data"]["result"]
                if up and up[0]["value"][1] == "1":
                    break
            except (RuntimeError, ValueError, KeyError, IndexError):
                pass
            assert time.time() < deadline, "Prometheus never scraped afcd: " + \
                (prom_dir / "prom.log").read_text()
            time.sleep(0.5)
        # 8 s of a 30 Mbit/s flood and TCP beside it through a 10 Mbit/s
        # config: every rate() has 8 scrapes within its window
        in_ns(a, ["iperf3", "-c", "198.18.0.2", "-p", "5201", "-u", "-b", "30M", "-t", "8"],
              timeout=40)
        in_ns(a, ["iperf3", "-c", "198.18.0.2", "-p", "5201", "-t", "2"], timeout=30)
        exprs = [instantiate(q, "v0") for _, q in queries]
        results = query_all(a, prom_port, [e for e, _ in exprs])
    finally:
        stop(prom)
        stop(loader)
        srv.kill()
        srv.wait()
    empty = []
    values = {}
    for (what, q), (expr, label), r in zip(queries, exprs, results):
        assert r["status"] == "success", (what, expr, r)
        series = r["data"]["result"]
        if not series or any(s["metric"].get("dev") != "v0" for s in series) or \
                (label and not all(label in s["metric"] for s in series)):
            empty.append("%s: %s -> %s" % (what, expr, series))
        values[q] = [float(s["value"][1]) for s in series]
    assert not empty, "\n".join(empty)
    traffic = [v for q, v in values.items() if q.startswith("rate(afcd_bytes_total")][0]
    assert traffic[0] > 0, traffic
    drops = [v for q, v in values.items() if "afcd_drops_total" in q][0]
    assert sum(drops) > 0, drops
