# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The lists of maps/afcd_maps.h, read from the header itself so that the
Python side never keeps a second copy: the pinned maps (AFCD_PINS), the
drop laws (AFCD_ALGOS), the aggregates (AFCD_AGGS) and the counters (AFCD_STATS, AFCD_ASTATS,
AFCD_GSTATS), each in the header's order.

  ABI     the layout version of the maps (AFCD_ABI_VERSION)
  PIN_DIR where the maps are pinned (AFCD_PIN_DIR)
  PINS    [(field, map name)]
  ALGOS   [algo name]                    (the `algo` parameter's values)
  AGGS    [aggregate name]               (`afcd stats -j` queue.aggregates)
  STATS, ASTATS, GSTATS
          [(key, prometheus family or None, label, help)]
          key: the counter's name in `afcd stats -j` (queue / global)
"""
import os
import re

HEADER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "maps", "afcd_maps.h")


def _list_body(text, name):
    """The entries of `#define NAME(FN) ...` (continuation lines joined)."""
    m = re.search(r"#define %s\(FN\)((?:[^\n]*\\\n)*[^\n]*)" % name, text)
    if not m:
        raise ValueError("%s: no list %s" % (HEADER, name))
    return m.group(1).replace("\\\n", " ")


def _entries(body):
    """FN(...) entries split into their arguments (C string literals kept
    whole, adjacent literals joined)."""
    out = []
    for m in re.finditer(r"FN\(((?:\"(?:[^\"\\]|\\.)*\"|[^()\"]|\([^()]*\))*)\)", body):
        args, cur, i, s = [], "", 0, m.group(1)
        while i < len(s):
            c = s[i]
            if c == '"':
                j = i + 1
                while s[j] != '"':
                    j += 2 if s[j] == "\\" else 1
                cur += s[i:j + 1]
                i = j + 1
                continue
            if c == ",":
                args.append(cur.strip())
                cur = ""
            else:
                cur += c
            i += 1
        args.append(cur.strip())
        out.append([_value(a) for a in args])
    return out


def _value(arg):
    """A C argument: joined string literals as str, NULL as None, else text."""
    if arg == "NULL":
        return None
    lits = re.findall(r"\"((?:[^\"\\]|\\.)*)\"", arg)
    if lits and re.fullmatch(r"(\s*\"(?:[^\"\\]|\\.)*\"\s*)+", arg):
        return "".join(lits).replace('\\"', '"')
    return arg


def _load():
    with open(HEADER) as fh:
        text = fh.read()
    pins = [(e[0], e[1]) for e in _entries(_list_body(text, "AFCD_PINS"))]
    algos = [e[1] for e in _entries(_list_body(text, "AFCD_ALGOS"))]
    aggs = [e[1] for e in _entries(_list_body(text, "AFCD_AGGS"))]
    counters = {n: [tuple(e[1:5]) for e in _entries(_list_body(text, n))]
                for n in ("AFCD_STATS", "AFCD_ASTATS", "AFCD_GSTATS")}
    pin_dir = re.search(r'#define AFCD_PIN_DIR "([^"]+)"', text).group(1)
    abi = int(re.search(r"#define AFCD_ABI_VERSION (\d+)u", text).group(1))
    return pins, algos, aggs, counters, pin_dir, abi


PINS, ALGOS, AGGS, _C, PIN_DIR, ABI = _load()
STATS, ASTATS, GSTATS = _C["AFCD_STATS"], _C["AFCD_ASTATS"], _C["AFCD_GSTATS"]
PIN_NAMES = [name for _, name in PINS]
