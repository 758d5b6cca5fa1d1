#!/usr/bin/env bash
# The command line end to end with the real binaries: exit statuses, error
# locations, --root relocation, --dry-run, a start with stdout and stderr
# closed (what nasboot says then lands in no file it opens), on the host
# and on every board target under qemu-user (NASBOOT_TARGETS to narrow).
# No root needed: the profiles here touch files only (firewall off, no
# interfaces).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"

targets=$(t_targets all)
work=$(mktemp -d /tmp/nasboot-cli.XXXXXX)
trap 'rm -rf "$work"' EXIT

cat >"$work/files.toml" <<'TOML'
[board]
name = "files-only"
[firewall]
profile = "off"
[[storage]]
device = "sdz"
read_ahead_kb = 2048
TOML
printf '[board]\nname = "t"\n[[interface]]\nname = "abcdefghijklmnop"\nrole = "lan"\n' >"$work/bad.toml"

for t in $targets; do
	read -ra nb <<<"$(nasboot_for "$t")"
	if [ ! -x "${nb[-1]}" ]; then
		t_fail "$t: no binary at ${nb[-1]} (run scripts/build)"
		continue
	fi
	for b in "$T_TOP"/board/*.toml; do
		t_check "$t: check ${b##*/}" "${nb[@]}" -q check -c "$b"
	done

	set +e
	err=$("${nb[@]}" check -c "$work/bad.toml" 2>&1 >/dev/null)
	st=$?
	set -e
	t_eq "$t: bad profile exits 2" 2 "$st"
	t_has "$t: bad profile names file:line:column and key" "$work/bad.toml:4:8: interface[0].name: " "$err"

	set +e
	"${nb[@]}" frobnicate >/dev/null 2>&1
	st=$?
	set -e
	t_eq "$t: unknown command exits 2" 2 "$st"

	# --root relocates the profile and every path the apply writes.
	root=$work/root-$t
	mkdir -p "$root/etc" "$root/sys/block/sdz/queue"
	cp "$work/files.toml" "$root/etc/nasboot.toml"
	echo 128 >"$root/sys/block/sdz/queue/read_ahead_kb"
	out=$("${nb[@]}" --root "$root" --dry-run apply 2>&1)
	t_has "$t: dry-run says what it would write" "would write \"2048\" to /sys/block/sdz/queue/read_ahead_kb" "$out"
	t_eq "$t: dry-run changed nothing" 128 "$(cat "$root/sys/block/sdz/queue/read_ahead_kb")"
	t_check "$t: apply --root" "${nb[@]}" -q --root "$root" apply
	t_eq "$t: apply wrote under --root" 2048 "$(cat "$root/sys/block/sdz/queue/read_ahead_kb")"
	out=$("${nb[@]}" --root "$root" plan)
	t_has "$t: re-plan finds nothing to do" "nothing to do" "$out"

	# Started with stdout and stderr closed (a supervisor may): nasboot
	# fills the holes with /dev/null first, so what it says lands in no
	# file it opens (the apply's lock, the files it writes).
	echo 128 >"$root/sys/block/sdz/queue/read_ahead_kb"
	set +e
	"${nb[@]}" -v --root "$root" apply >&- 2>&-
	st=$?
	set -e
	t_eq "$t: apply with stdout and stderr closed exits 0" 0 "$st"
	t_eq "$t: ... and wrote its settings" 2048 "$(cat "$root/sys/block/sdz/queue/read_ahead_kb")"
	t_eq "$t: ... and its messages into no file (the lock stays empty)" "" "$(find "$root" -type f -size +0 ! -name read_ahead_kb ! -name nasboot.toml)"

	# Output into a pipe nobody reads gives EPIPE, not a SIGPIPE death
	# (main.rs ignores SIGPIPE itself: it has no std start-up). perl
	# (Debian's essential perl-base) closes the read end before the exec,
	# so the write fails every time.
	set +e
	perl -e 'pipe(my $r, my $w) or die; close $r; open(STDOUT, ">&", $w) or die; exec @ARGV or die' \
		"${nb[@]}" --root "$root" plan 2>/dev/null
	st=$?
	set -e
	t_eq "$t: stdout into a closed pipe exits 0 (no SIGPIPE)" 0 "$st"

	# Kernel floor (main.rs KERNEL_FLOOR): qemu-user's -r makes uname report
	# an older release. At the floor the binary runs; one release below, it
	# says which kernel it needs and exits 1.
	[ "${#nb[@]}" = 2 ] || continue # the host: no qemu to fake a release
	case $t in
	mips*-musl) floor=2.6.19 below=2.6.18 ;;
	*-musl) floor=2.6.16 below=2.6.15 ;;
	*) floor=3.2.0 below=3.1.10 ;;
	esac
	t_check "$t: runs on Linux $floor" "${nb[0]}" -r "$floor" "${nb[1]}" -q check -c "$work/files.toml"
	set +e
	err=$("${nb[0]}" -r "$below" "${nb[1]}" -q check -c "$work/files.toml" 2>&1)
	st=$?
	set -e
	t_eq "$t: Linux $below: exits 1" 1 "$st"
	t_has "$t: Linux $below: names the floor" "needs Linux $floor or later, and this kernel is $below" "$err"
done
t_done
