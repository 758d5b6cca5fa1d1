#!/usr/bin/env bash
# `nasboot watchdog` on bad input, with the real binaries on the host (no
# watchdog there): missing device, a file that is no watchdog (ENOTTY:
# refused, nothing written), no [watchdog] section, bad WDTFD (not a
# number, standard output, not open); and a
# foreign binary under qemu-user, where the watchdog ioctls give ENOSYS:
# it must keep petting with write() and say so.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"

work=$(mktemp -d /tmp/nasboot-wd-bad.XXXXXX)
trap 'rm -rf "$work"' EXIT

read -ra nb <<<"$(nasboot_for host)"
if [ ! -x "${nb[-1]}" ]; then
	t_fail "no host binary at ${nb[-1]} (run scripts/build host)"
	t_done
	exit 1
fi

# run_nb ARGS...: sets st (exit status) and err (stderr).
run_nb() {
	set +e
	err=$("$@" 2>&1 >/dev/null)
	st=$?
	set -e
}

root=$work/root
mkdir -p "$root/etc" "$root/dev"
printf '[board]\nname = "t"\n[watchdog]\ndevice = "/dev/watchdog-none"\ntimeout = 5\n' >"$root/etc/nasboot.toml"
run_nb timeout 10 "${nb[@]}" --root "$root" watchdog
t_eq "missing device: exit 1" 1 "$st"
t_has "missing device: names it" "no watchdog device: tried /dev/watchdog-none" "$err"

printf '[board]\nname = "t"\n[watchdog]\ntimeout = 5\n' >"$root/etc/nasboot.toml"
: >"$root/dev/watchdog0"
run_nb timeout 10 "${nb[@]}" --root "$root" watchdog
t_eq "not a watchdog: exit 1" 1 "$st"
t_has "not a watchdog: says so" "/dev/watchdog0: not a watchdog device (WDIOC_GETSUPPORT: inappropriate ioctl); closed without writing" "$err"
t_eq "not a watchdog: nothing written" 0 "$(stat -c %s "$root/dev/watchdog0")"

run_nb timeout 10 env WDTFD=abc "${nb[@]}" --root "$root" watchdog
t_eq "WDTFD not a number: exit 2" 2 "$st"
t_has "WDTFD not a number: says so" 'WDTFD="abc" is not a file descriptor number' "$err"
run_nb timeout 10 env WDTFD=1 "${nb[@]}" --root "$root" watchdog
t_eq "WDTFD=1 (standard output): exit 2" 2 "$st"
t_has "WDTFD=1 (standard output): says so" "WDTFD=1 is standard output, not a watchdog descriptor handed over (those are 3 and above)" "$err"
run_nb timeout 10 env WDTFD=57 "${nb[@]}" --root "$root" watchdog
t_eq "WDTFD not open: exit 1" 1 "$st"
t_has "WDTFD not open: says so" "WDTFD=57: cannot adopt the inherited watchdog descriptor" "$err"

printf '[board]\nname = "t"\n' >"$root/etc/nasboot.toml"
run_nb timeout 10 "${nb[@]}" --root "$root" watchdog
t_eq "no [watchdog]: exit 2" 2 "$st"
t_has "no [watchdog]: says so" "the profile has no [watchdog] section" "$err"

printf '[board]\nname = "t"\n[watchdog]\ntimeout = 5\ntest_command = ["/bin/true"]\nrt_priority = 120\n' >"$root/etc/nasboot.toml"
run_nb timeout 10 "${nb[@]}" --root "$root" watchdog
t_eq "rt_priority 120: exit 2" 2 "$st"
t_has "rt_priority 120: file:line:column and key" "/etc/nasboot.toml:" "$err"
t_has "rt_priority 120: message" "rt_priority is 1 to 99" "$err"

# qemu-user: the ioctls give ENOSYS whatever the file; petting goes on with
# write(). The mipsel binaries, both libcs.
for t in mipsel-unknown-linux-gnu mipsel-unknown-linux-musl; do
	read -ra nbm <<<"$(nasboot_for "$t")"
	if [ -x "${nbm[-1]}" ]; then
		printf '[board]\nname = "t"\n[watchdog]\ntimeout = 2\n' >"$root/etc/nasboot.toml"
		: >"$root/dev/watchdog0"
		"${nbm[@]}" -v --root "$root" watchdog 2>"$work/qemu.err" &
		pid=$!
		sleep 4
		kill -TERM "$pid"
		set +e
		wait "$pid"
		st=$?
		set -e
		err=$(cat "$work/qemu.err")
		t_eq "$t under qemu-user: SIGTERM exits 0" 0 "$st"
		t_has "$t under qemu-user: says the driver could not be queried" "the driver could not be queried (Function not implemented (os error " "$err"
		size=$(stat -c %s "$root/dev/watchdog0")
		if [ "$size" -ge 3 ]; then t_ok "$t under qemu-user: petted with write() ($size bytes)"; else t_fail "$t under qemu-user: only $size bytes written"; fi
		t_eq "$t under qemu-user: the last byte is the magic V" V "$(tail -c1 "$root/dev/watchdog0")"
		t_has "$t under qemu-user: the stop is reported as unconfirmed" "magic close written, but the driver could not be queried" "$err"
	else
		t_fail "$t: no binary at ${nbm[-1]} (run scripts/build $t)"
	fi
done
t_done
