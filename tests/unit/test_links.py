# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Every relative link and anchor of the project's Markdown resolves: the
README, CONTRIBUTING.md, docs/*.md and the reproduction's reports. A link
names a file of the tree; an anchor names a heading of its target as
GitHub renders it (lower case, punctuation but '-' and '_' dropped, each
space a '-', a repeated heading suffixed -1, -2, ...)."""
import glob
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def markdown_files():
    pats = ["README.md", "CONTRIBUTING.md", "docs/*.md", "docs/reproduction/**/*.md"]
    files = []
    for p in pats:
        files += glob.glob(os.path.join(ROOT, p), recursive=True)
    return sorted(set(files))


def prose(text):
    """The text outside fenced code blocks and inline code."""
    out, fenced = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(re.sub(r"`[^`]*`", "", line))
    return out


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    seen, out, fenced = {}, set(), False
    for line in open(path, encoding="utf-8").read().splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if m and not fenced:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else "%s-%d" % (base, n))
    return out


def links(path):
    for line in prose(open(path, encoding="utf-8").read()):
        for m in LINK.finditer(line):
            yield m.group(1)


def test_slug_follows_github():
    """Expected result: the slug rule gives GitHub's anchors for this
    project's kinds of heading (code, parentheses, >=, dots)."""
    assert slug("The qdisc backend (Linux >= 6.16 with `CONFIG_NET_SCH_BPF`)") == \
        "the-qdisc-backend-linux--616-with-config_net_sch_bpf"
    assert slug("3a. How this project builds sec. 3 (the fairness module)") == \
        "3a-how-this-project-builds-sec-3-the-fairness-module"


def test_every_relative_link_and_anchor_resolves():
    """Expected result: no link of the docs points at a missing file or
    heading; the failure lists every broken one."""
    files = markdown_files()
    assert len(files) >= 10, files
    broken = []
    for path in files:
        for target in links(path):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                if file_part else path
            rel = os.path.relpath(path, ROOT)
            if not os.path.exists(dest):
                broken.append("%s: %s (no such file)" % (rel, target))
            elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                broken.append("%s: %s (no such heading)" % (rel, target))
    assert not broken, "\n".join(broken)


def test_readme_reads_in_five_minutes():
    """Expected result: the README stays a few screens (about 250 lines)
    and links every document of docs/."""
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert len(text.splitlines()) <= 260
    for doc in glob.glob(os.path.join(ROOT, "docs", "*.md")):
        assert "docs/" + os.path.basename(doc) in text, doc
