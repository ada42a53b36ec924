# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The lists of maps/afcd_maps.h as testbed.abi reads them from the header
(no root; tests/netns/test_lists.py checks that every output follows them)."""
from testbed import abi


def test_abi_lists_parsed():
    """Expected result: the header's lists parse to what the ABI has always
    had (a parse error would silently empty every generated output)."""
    assert [n for _, n in abi.PINS][:3] == ["afcd_cfg", "afcd_est", "afcd_queue"]
    assert len(abi.PINS) == 13 and len(set(abi.PIN_NAMES)) == 13
    assert abi.PIN_NAMES[-1] == "afcd_seen"
    assert abi.ALGOS == ["droptail", "codel", "afd", "afcd", "fall"]
    assert abi.AGGS == ["unclassified", "overflow", "mice"]
    assert [k for k, _, _, _ in abi.STATS][:2] == ["passed", "passed_bytes"]
    assert all(h for _, _, _, h in abi.STATS + abi.ASTATS + abi.GSTATS)
    assert abi.PIN_DIR == "/sys/fs/bpf/tc/globals"
