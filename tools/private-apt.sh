# shellcheck shell=bash
# private-apt.sh - an apt configuration of its own in a directory, so that
# packages and sources of another Debian release (trixie-backports) can be
# fetched without touching this machine's sources or state. Sourced by
# tools/deps.sh and tools/bpf-fq.sh.

# private_apt DIR LINE...: writes DIR's configuration with the sources.list
# lines LINE... (deb or deb-src, signed by Debian's archive key), runs apt's
# update there and sets the array PAPT to the options every apt-get and
# apt-cache call against it takes. Returns apt-get update's status.
private_apt() {
	local d=$1 l
	shift
	mkdir -p "$d/etc/apt.conf.d" "$d/etc/preferences.d" "$d/etc/sources.list.d" \
		"$d/lists/partial" "$d/cache/archives/partial"
	: > "$d/etc/sources.list"
	for l in "$@"; do echo "$l" >> "$d/etc/sources.list"; done
	PAPT=(-o Dir::Etc="$d/etc" -o Dir::State::Lists="$d/lists" -o Dir::Cache="$d/cache"
	      -o Debug::NoLocking=1 -q)
	apt-get "${PAPT[@]}" update >/dev/null 2>&1
}

# The sources.list line of trixie-backports; TYPE is deb or deb-src.
trixie_backports() {
	echo "$1 [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
	     "http://deb.debian.org/debian trixie-backports main"
}
