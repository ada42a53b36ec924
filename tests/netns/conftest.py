# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
import os

import pytest

from testbed import netns as nslib


@pytest.fixture(scope="session", autouse=True)
def _root_and_build():
    if os.geteuid() != 0:
        pytest.exit("the namespace tests need root", returncode=1)
    if not os.path.exists(nslib.AFCD):
        pytest.exit("build first: make", returncode=1)
    nslib.ensure_bpffs()


@pytest.fixture
def pair():
    """Two namespaces: 'a' (runs the program on its veth 'v0' egress) and
    'b' (the peer, 'v1'), linked with 198.18.0.1/24 <-> .2 and fd00::1/64
    <-> ::2. Yields (a, b). Removes everything afterwards, including a
    detach of anything afcd left on v0."""
    nss = nslib.Namespaces()
    a = nss.add("a")
    b = nss.add("b")
    nss.link(a, "v0", b, "v1", ["198.18.0.1/24", "fd00::1/64"],
             ["198.18.0.2/24", "fd00::2/64"])
    try:
        yield a, b
    finally:
        nslib.afcd(a, "detach", "v0", check=False)
        nss.close()
