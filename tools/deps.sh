#!/usr/bin/env bash
# Install what the build, the tests and the testbed need on Debian 12
# (bookworm), as root. Idempotent: only missing packages are installed.
#   tools/deps.sh          build + host tests
#   tools/deps.sh --vm     also the VM runner (Debian kernel, qemu, virtme-ng)
set -euo pipefail

pkgs=(clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libmicrohttpd-dev libmnl-dev libjson-c-dev pkg-config make gcc
      iproute2 iperf3 ethtool iputils-ping procps kmod util-linux
      python3 python3-pytest python3-matplotlib python3-bpfcc)
vm=0
[ "${1:-}" = "--vm" ] && vm=1
[ $vm = 1 ] && pkgs+=(linux-image-amd64 linux-headers-amd64 qemu-system-x86 python3-pip busybox-static)

if [ "$(id -u)" != 0 ]; then
	echo "deps.sh: run as root (it installs Debian packages)" >&2
	exit 1
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps.sh: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q >/dev/null
	apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ $vm = 1 ] && ! command -v vng >/dev/null 2>&1; then
	echo "deps.sh: installing virtme-ng (pip)"
	python3 -m pip install -q virtme-ng 2>/dev/null ||
		/usr/bin/python3 -m pip install -q --break-system-packages virtme-ng
fi
# bpffs for the pinned maps
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf -o mode=0700
fi
