# shellcheck shell=bash
# Shared helpers for the shell test suites under tests/. Sourced, not run.
#
# A suite sources this file, calls `t_ok`/`t_fail` (or the assert helpers)
# and ends with `t_done`, which prints "N passed, M failed" and exits
# non-zero on any failure.
#
# Binaries: scripts/build leaves static binaries in target/dist/. A suite
# runs nasboot through `nasboot_for TARGET`, which prints the argv prefix
# (qemu-user for foreign targets), e.g.
#   read -ra NB <<<"$(nasboot_for mips-unknown-linux-gnu)"; "${NB[@]}" check

T_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
T_DIST=${NASBOOT_DIST:-$T_TOP/target/dist}
T_PASS=0
T_FAIL=0
export T_TOP T_DIST
# shellcheck source=scripts/lib/apt.sh
. "$T_TOP/scripts/lib/apt.sh"

t_ok() { T_PASS=$((T_PASS + 1)); printf 'ok   %s\n' "$*"; }
t_fail() { T_FAIL=$((T_FAIL + 1)); printf 'FAIL %s\n' "$*"; }

# t_check DESC CMD...: passes when CMD succeeds.
t_check() {
	local desc=$1
	shift
	if "$@"; then t_ok "$desc"; else t_fail "$desc"; fi
}

# t_eq DESC WANT GOT
t_eq() {
	if [ "$2" = "$3" ]; then t_ok "$1"; else t_fail "$1: want [$2] got [$3]"; fi
}

# t_has DESC NEEDLE HAYSTACK
t_has() {
	case $3 in
	*"$2"*) t_ok "$1" ;;
	*) t_fail "$1: [$2] not in [$3]" ;;
	esac
}

# t_need PKG...: install the Debian packages that are missing
# (scripts/lib/apt.sh).
t_need() {
	apt_install "$@"
}

# t_median: the median of the numbers on standard input, one per line
# (the mean of the middle two, to 3 decimals, for an even count). For the
# benchmark scripts.
t_median() {
	sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.3f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

t_done() {
	printf '%s: %d passed, %d failed\n' "${0##*/}" "$T_PASS" "$T_FAIL"
	[ "$T_FAIL" -eq 0 ]
}

# The targets whose binaries the suites run, one line each: the triple,
# then the lists it is on. "all": the suites that run every binary
# (tests/cli/cli.sh); "netns": the namespace suites (tests/firewall/,
# tests/net/links.sh), which run one of each kind (endianness, word size,
# libc: big-endian 32-bit musl, 32-bit glibc, 64-bit glibc) to keep their
# time down. A musl build sits beside its glibc twin.
# Adding a target is one line here (and its build in scripts/lib/toolchain.sh).
T_TARGETS='
host                        all netns
powerpc-unknown-linux-gnu   all
powerpc-unknown-linux-musl  all netns
mips-unknown-linux-gnu      all netns
mips-unknown-linux-musl     all
mipsel-unknown-linux-gnu    all
mipsel-unknown-linux-musl   all
sparc-unknown-linux-gnu     all
sparc64-unknown-linux-gnu   all netns
'

# The binary the emulated-board suites (scripts/board: the mipsel malta
# board) run: the musl build, which is what ships for MIPS;
# NASBOOT_BOARD_TARGET=mipsel-unknown-linux-gnu runs the glibc twin
# (scripts/test does, for the suites in its board_glibc_suites).
T_BOARD_TARGET=${NASBOOT_BOARD_TARGET:-mipsel-unknown-linux-musl}
export T_BOARD_TARGET

# t_targets LIST: the triples on LIST, one a line; NASBOOT_TARGETS
# (space-separated triples or "host") replaces the table.
t_targets() {
	if [ -n "${NASBOOT_TARGETS:-}" ]; then
		local t_list
		read -ra t_list <<<"$NASBOOT_TARGETS"
		printf '%s\n' "${t_list[@]}"
		return
	fi
	awk -v l="$1" 'NF { for (i = 2; i <= NF; i++) if ($i == l) { print $1; next } }' <<<"$T_TARGETS"
}

# t_path_without_nft DIR: print a PATH on which `nft` is not found, for
# running nasboot's own nf_tables loader with nothing to fall back on: DIR
# gets a link to every program of /usr/sbin and /sbin but nft (Debian
# installs nft in /usr/sbin only), then /usr/bin and /bin follow.
t_path_without_nft() {
	local dir=$1 f
	mkdir -p "$dir"
	for f in /usr/sbin/* /sbin/*; do
		[ "${f##*/}" = nft ] && continue
		[ -e "$dir/${f##*/}" ] || ln -s "$f" "$dir/${f##*/}"
	done
	if PATH="$dir:/usr/bin:/bin" command -v nft >/dev/null; then
		echo "t_path_without_nft: nft is still on $dir:/usr/bin:/bin" >&2
		return 1
	fi
	echo "$dir:/usr/bin:/bin"
}

# t_native_or_tool TARGET: the words `firewall apply` says for how the
# nftables rule set was loaded: "through netlink" for the host binary,
# "with nft: the kernel refused the nf_tables netlink socket" for a
# board binary under qemu-user (which opens no NETLINK_NETFILTER socket).
t_native_or_tool() {
	if [ "$1" = host ]; then echo "through netlink"; else echo "with nft: the kernel refused the nf_tables netlink socket"; fi
}

# t_present_targets LIST [TARGET...]: the TARGETs given, or else the
# triples on LIST whose binary is in $T_DIST (the host always), one a line:
# the targets a suite runs by default.
t_present_targets() {
	local list=$1 t
	shift
	if [ $# -gt 0 ]; then
		printf '%s\n' "$@"
		return
	fi
	for t in $(t_targets "$list"); do
		if [ "$t" = host ] || [ -x "$T_DIST/nasboot-$t" ]; then
			echo "$t"
		fi
	done
}

# The qemu-user program for a target triple (empty for the host).
qemu_for() {
	case $1 in
	powerpc-*) echo qemu-ppc ;;
	mips-*) echo qemu-mips ;;
	mipsel-*) echo qemu-mipsel ;;
	sparc-*) echo qemu-sparc32plus ;;
	sparc64-*) echo qemu-sparc64 ;;
	*) echo "" ;;
	esac
}

# The argv prefix that runs nasboot built for TARGET ("host" or a triple).
nasboot_for() {
	local t=$1 bin q
	if [ "$t" = host ]; then
		t=x86_64-unknown-linux-gnu
	fi
	bin=$T_DIST/nasboot-$t
	q=$(qemu_for "$t")
	if [ -n "$q" ]; then echo "$q $bin"; else echo "$bin"; fi
}

# host_nasboot: NB, the command line of the host's nasboot (nasboot_for
# host); a binary not built stops the suite (exit 1), naming its path.
host_nasboot() {
	# shellcheck disable=SC2034 # NB is the suite's
	read -ra NB <<<"$(nasboot_for host)"
	if [ ! -x "${NB[0]}" ]; then
		echo "no nasboot binary at ${NB[0]}: run scripts/build host or set NASBOOT_DIST" >&2
		exit 1
	fi
}
