#!/usr/bin/env bash
# bpf-fq.sh - build the Linux kernel's own BPF FQ qdisc (bpf_fq: the
# selftest tools/testing/selftests/bpf/progs/bpf_qdisc_fq.c, sch_fq's
# scheduling before its three bands, in BPF) for the kernel the qdisc
# benchmark boots, as an anchor for the qdisc backend's cost
# (testbed/qdisc_bench.py). Nothing of it is kept in this tree: its source
# comes from that kernel's own release, the upstream tarball Debian's
# trixie-backports publishes for it (linux_X.Y.Z.orig.tar.xz, checked
# against the sha256 of the source index), fetched with a private apt
# configuration (tools/private-apt.sh); its types from the BTF of the
# kernel image itself (/boot/vmlinuz-REL); built with clang-16.
#   tools/bpf-fq.sh OUT.o [REL]   REL: a release under /boot, default the
#                                 newest 6.1[7-9] or later +deb13 one
# Needs root only where /boot's image is not readable. Exit 0 with OUT.o
# built; 1 with one line on stderr saying what was missing.
set -euo pipefail
. "$(dirname "$0")/private-apt.sh"

out=${1:?usage: tools/bpf-fq.sh OUT.o [KERNEL_RELEASE]}
rel=${2:-}
if [ -z "$rel" ]; then
	rel=$(ls /boot/vmlinuz-6.1[7-9].*+deb13-amd64 /boot/vmlinuz-6.[2-9][0-9].*+deb13-amd64 \
	      2>/dev/null | sed 's|^/boot/vmlinuz-||' | sort -V | tail -1 || true)
fi
img=/boot/vmlinuz-$rel
die() { echo "bpf-fq.sh: $*" >&2; exit 1; }
[ -n "$rel" ] && [ -r "$img" ] || die "no kernel image ${img:-/boot/vmlinuz-6.1[7-9]*+deb13-amd64}"
ver=${rel%%+*}                                  # 6.18.15+deb13-amd64 -> 6.18.15
command -v clang-16 >/dev/null || die "clang-16 missing (tools/deps.sh installs it)"
command -v bpftool >/dev/null || die "bpftool missing (tools/deps.sh installs it)"

w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
private_apt "$w/apt" "$(trixie_backports deb-src)" || die "apt update of trixie-backports' sources failed"
# the orig tarball of upstream $ver: its name and sha256 from the index
tarball=linux_$ver.orig.tar.xz
apt-cache "${PAPT[@]}" showsrc linux > "$w/src" 2>/dev/null || die "no Linux sources in trixie-backports"
sum=$(awk -v t="$tarball" '/^Checksums-Sha256:/ {c = 1; next} /^[^ ]/ {c = 0}
			  c && $3 == t {print $1; exit}' "$w/src")
dir=$(awk '/^Directory:/ {print $2; exit}' "$w/src")
[ -n "$sum" ] && [ -n "$dir" ] || die "trixie-backports has no source of Linux $ver"
curl -fsS -o "$w/$tarball" "http://deb.debian.org/debian/$dir/$tarball" ||
	die "download of $dir/$tarball failed"
echo "$sum  $w/$tarball" | sha256sum -c --quiet - || die "$tarball: sha256 differs from the index"
st=linux-$ver/tools/testing/selftests/bpf
tar -xJf "$w/$tarball" -C "$w" "$st/progs/bpf_qdisc_fq.c" "$st/progs/bpf_qdisc_common.h" \
	"$st/progs/bpf_misc.h" "$st/bpf_experimental.h" "$st/bpf_arena_common.h" \
	"linux-$ver/scripts/extract-vmlinux" || die "$tarball lacks the BPF FQ selftest"
rm -f "$w/$tarball"
# the kernel's types, from its image's BTF
sh "$w/linux-$ver/scripts/extract-vmlinux" "$img" > "$w/vmlinux" 2>/dev/null ||
	die "cannot unpack $img"
bpftool btf dump file "$w/vmlinux" format c > "$w/vmlinux.h" || die "no BTF in $img"
grep -q "struct bpf_sk_buff_ptr {" "$w/vmlinux.h" || die "Linux $rel has no BPF qdiscs"
# <errno.h> for the BPF target: the kernel's numbers, not glibc's headers
mkdir -p "$w/inc"
echo '#include <asm-generic/errno.h>' > "$w/inc/errno.h"
clang-16 -g -O2 -target bpf -D__TARGET_ARCH_x86 -w -I"$w/inc" -I"$w" -I"$w/$st" \
	-I"$w/$st/progs" -c "$w/$st/progs/bpf_qdisc_fq.c" -o "$out" || die "clang-16 failed"
echo "bpf-fq.sh: $out: bpf_fq of Linux $ver (for $rel)"
