#!/usr/bin/env bash
# Install what the build, the tests and the testbed need on Debian 12
# (bookworm), as root. Idempotent: only missing packages are installed.
#   tools/deps.sh                 build + host tests
#   tools/deps.sh --vm            also the VM runner: qemu, virtme-ng and both
#                                 Debian kernels, 6.1 (bookworm) and 6.12
#                                 (linux-image-6.12-amd64, bookworm-security;
#                                 from bookworm-backports where that is missing),
#                                 and Linux >= 6.17 unpacked from trixie-backports
#                                 for the qdisc backend (nothing added to the
#                                 machine's apt sources)
#   tools/deps.sh --ns3           also the ns-3 engine: PyPI's ns3 3.44 wheel
#                                 (pinned by its hash) unpacked to
#                                 /usr/local/lib/afcd-ns3 (headers and shared
#                                 libraries for `make sim`; no Python import)
#   tools/deps.sh --backports     libbpf, bpftool and iproute2 from
#                                 bookworm-backports (libbpf 1.4, bpftool 7.5,
#                                 iproute2 6.15: tcx attach, bpftool net show
#                                 of tcx links)
#   tools/deps.sh --no-backports  Debian 12's own versions only
# Without either, backports are added only where they are needed: the
# running kernel has tcx (Linux >= 6.6) and the installed libbpf is older
# than 1.3. If they cannot be installed then, Debian 12's own versions are
# kept (afcd then attaches with clsact) and the script says so.
set -euo pipefail
. "$(dirname "$0")/private-apt.sh"

pkgs=(clang clang-16 llvm libbpf-dev bpftool libelf-dev zlib1g-dev libmicrohttpd-dev libmnl-dev libjson-c-dev pkg-config make gcc
      iproute2 iperf3 ethtool iputils-ping procps kmod util-linux
      python3 python3-pytest python3-matplotlib python3-bpfcc python3-yaml python3-pip
      python3-pyroute2 libcap2-bin
      strace systemd time
      debhelper dpkg-dev lintian groff-base man-db)
vm_pkgs=(linux-image-amd64 linux-headers-amd64 qemu-system-x86 busybox-static)
bp_pkgs=(libbpf-dev libbpf1 bpftool iproute2)
vm=0 ns3=0 backports=auto
for a in "$@"; do
	case "$a" in
	--vm) vm=1 ;;
	--ns3) ns3=1 ;;
	--backports) backports=yes ;;
	--no-backports) backports=no ;;
	*) echo "usage: tools/deps.sh [--vm] [--ns3] [--backports|--no-backports]" >&2; exit 2 ;;
	esac
done
[ $vm = 1 ] && pkgs+=("${vm_pkgs[@]}")
[ $ns3 = 1 ] && pkgs+=(g++)

if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
updated=0
apt_update() {
	[ $updated = 1 ] || apt-get update -q >/dev/null
	updated=1
}
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=()
for p in "${pkgs[@]}"; do
	installed "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps.sh: installing ${missing[*]}"
	apt_update
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

# bookworm-backports: libbpf >= 1.3 for tcx
BP_LIST=/etc/apt/sources.list.d/bookworm-backports.sources
add_backports() {
	if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
		printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\n%s\n%s\n' \
			"Components: main" "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg" \
			> "$BP_LIST"
		updated=0
	fi
	apt_update
}
libbpf_ver=$(dpkg-query -W -f='${Version}' libbpf-dev 2>/dev/null || echo 0)
kernel_has_tcx() {
	local r; r=$(uname -r); r=${r%%-*}
	dpkg --compare-versions "$r" ge 6.6
}
if [ $backports = auto ] && kernel_has_tcx && dpkg --compare-versions "$libbpf_ver" lt 1:1.3; then
	backports=want
fi
if [ $backports = yes ] || [ $backports = want ]; then
	if ! dpkg --compare-versions "$libbpf_ver" ge 1:1.3 || ! installed bpftool ||
	   dpkg --compare-versions "$(dpkg-query -W -f='${Version}' bpftool)" lt 7.3; then
		echo "deps.sh: installing ${bp_pkgs[*]} from bookworm-backports (tcx needs libbpf >= 1.3)"
		if ! { add_backports && apt-get install -y -q --no-install-recommends \
			-t bookworm-backports "${bp_pkgs[@]}" >/dev/null; }; then
			[ $backports = yes ] && { echo "deps.sh: bookworm-backports failed" >&2; exit 1; }
			echo "deps.sh: bookworm-backports unavailable: keeping Debian 12's libbpf" \
			     "(afcd attaches with clsact)" >&2
		fi
	fi
fi

# the second VM kernel, 6.12: bookworm's own linux-6.12
# (bookworm-security), else bookworm-backports' linux-image-amd64
if [ $vm = 1 ] && ! ls /boot/vmlinuz-6.12.* >/dev/null 2>&1; then
	echo "deps.sh: installing Linux 6.12 for the VM (linux-image-6.12-amd64)"
	apt_update
	apt-get install -y -q --no-install-recommends linux-image-6.12-amd64 \
		linux-headers-6.12-amd64 >/dev/null 2>&1 ||
	{ add_backports && apt-get install -y -q --no-install-recommends -t bookworm-backports \
		linux-image-amd64 linux-headers-amd64 >/dev/null; } ||
	echo "deps.sh: no Linux 6.12 package: the VM runs on 6.1 only" >&2
fi

# the third VM kernel, for the qdisc backend: BPF qdiscs need Linux >= 6.16
# with CONFIG_NET_SCH_BPF, which Debian enables from 6.17. Debian 12 has no
# such kernel, so trixie-backports' image is fetched with a private apt
# configuration (this machine's own sources are not touched) and unpacked
# for the VM: /boot/vmlinuz-VERSION and its modules, depmod'ed. The newest
# 6.17 or 6.18 (one package), else the newest later one (from 6.19 Debian
# splits it into linux-binary and linux-modules). Not the -cloud flavour:
# it lacks 9p, which virtme-ng shares the root with.
fetch_qdisc_kernel() {
	local k aopt img rel p
	k=$(mktemp -d)
	mkdir -p "$k/x"
	private_apt "$k" "$(trixie_backports deb)" || { rm -rf "$k"; return 1; }
	aopt=("${PAPT[@]}")
	img=$(apt-cache "${aopt[@]}" pkgnames linux-image-6. 2>/dev/null |
	      grep -E '^linux-image-6\.1[78]\.[0-9]+\+deb13-amd64$' | sort -V | tail -1)
	[ -n "$img" ] || img=$(apt-cache "${aopt[@]}" pkgnames linux-image-6. 2>/dev/null |
	      grep -E '^linux-image-6\.(19|[2-9][0-9])\.[0-9]+\+deb13-amd64$' | sort -V | tail -1)
	[ -n "$img" ] || { rm -rf "$k"; return 1; }
	rel=${img#linux-image-}
	for p in "$img" "linux-binary-$rel" "linux-modules-$rel"; do
		apt-cache "${aopt[@]}" show "$p" >/dev/null 2>&1 || continue
		(cd "$k" && apt-get "${aopt[@]}" download "$p" >/dev/null 2>&1) || { rm -rf "$k"; return 1; }
	done
	for p in "$k"/*.deb; do dpkg-deb -x "$p" "$k/x" || { rm -rf "$k"; return 1; }; done
	[ -f "$k/x/boot/vmlinuz-$rel" ] || { rm -rf "$k"; return 1; }
	install -m 0644 "$k/x/boot/vmlinuz-$rel" /boot/
	for p in config System.map; do
		[ -f "$k/x/boot/$p-$rel" ] && install -m 0644 "$k/x/boot/$p-$rel" /boot/
	done
	rm -rf "/usr/lib/modules/$rel"
	mkdir -p /usr/lib/modules
	if [ -d "$k/x/usr/lib/modules/$rel" ]; then cp -a "$k/x/usr/lib/modules/$rel" /usr/lib/modules/
	else cp -a "$k/x/lib/modules/$rel" /usr/lib/modules/; fi
	depmod -a "$rel"
	rm -rf "$k"
	echo "deps.sh: Linux $rel unpacked for the VM (afcd-testbed --kernel ${rel%.*+*})"
}
# one installed is enough (ls of both patterns fails while either matches nothing)
have_qdisc_kernel() {
	local f
	for f in /boot/vmlinuz-6.1[7-9].*+deb13-amd64 /boot/vmlinuz-6.[2-9][0-9].*+deb13-amd64; do
		[ -f "$f" ] && return 0
	done
	return 1
}
if [ $vm = 1 ] && ! have_qdisc_kernel; then
	echo "deps.sh: fetching Linux >= 6.17 from trixie-backports for the VM (BPF qdiscs)"
	fetch_qdisc_kernel || echo "deps.sh: no Linux >= 6.17 from trixie-backports: the qdisc" \
		"backend's VM tests are skipped" >&2
fi

# promtool and the server from Debian's prometheus package, for `promtool
# check metrics` and the dashboard's queries against a live scrape in the
# tests: only the binaries, to /usr/local/bin (installing the package would
# start a Prometheus server on a systemd host)
if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
	echo "deps.sh: installing promtool and prometheus (from Debian's prometheus package)"
	apt_update
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get download -q prometheus >/dev/null 2>&1 &&
	 dpkg-deb -x prometheus_*.deb x &&
	 install -m 0755 x/usr/bin/promtool x/usr/bin/prometheus /usr/local/bin/)
	rm -rf "$tmp"
fi
# the Kubernetes schemas for the manifests' check (tests/netns/test_deploy.py)
# and Grafana's dashboard models for the dashboard's (tests/unit/test_docs.py)
pip_need() {
	/usr/bin/python3 -c "import $1" 2>/dev/null && return
	echo "deps.sh: installing $2 (pip)"
	/usr/bin/python3 -m pip install -q --break-system-packages "$2" 2>/dev/null ||
		/usr/bin/python3 -m pip install -q "$2"
}
pip_need kubernetes_validate kubernetes-validate
pip_need grafana_foundation_sdk grafana-foundation-sdk
if [ $vm = 1 ] && ! command -v vng >/dev/null 2>&1; then
	echo "deps.sh: installing virtme-ng (pip)"
	python3 -m pip install -q virtme-ng 2>/dev/null ||
		/usr/bin/python3 -m pip install -q --break-system-packages virtme-ng
fi
# ns-3 3.44 for the ns-3 engine (sim/, testbed/ns3.py): the manylinux
# wheel's headers and libraries, built for Python 3.11 (Debian 12's), pinned
# by hash; into its own directory (Makefile NS3_DIR), never site-packages
NS3_TARGET=/usr/local/lib/afcd-ns3
NS3_PIN="ns3==3.44.post0 --hash=sha256:2a98479a4a3a1bb819b95ce061871a9d068268b42351b8f0ef598160939ba7ce"
if [ $ns3 = 1 ] && [ ! -f "$NS3_TARGET/ns3/lib64/libns3.44-core.so" ]; then
	echo "deps.sh: installing ns-3 3.44 (PyPI wheel ns3, 69 MB) to $NS3_TARGET"
	req=$(mktemp)
	echo "$NS3_PIN" > "$req"
	rm -rf "$NS3_TARGET"
	/usr/bin/python3 -m pip install -q --no-deps --only-binary=:all: --require-hashes \
		--target "$NS3_TARGET" -r "$req" 2>/dev/null ||
		/usr/bin/python3 -m pip install -q --break-system-packages --no-deps \
		--only-binary=:all: --require-hashes --target "$NS3_TARGET" -r "$req" ||
		echo "deps.sh: ns-3 could not be installed: the ns-3 engine's tests are skipped" >&2
	rm -f "$req"
fi
# bpffs for the pinned maps
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf -o mode=0700
fi
