#!/usr/bin/env bash
# scripts/board's big-endian boards (--board ppc, mips-be, sparc64) on bad input: each case
# ends with a message naming the reason and the board, and a documented
# exit status, never a hang. A kernel fragment that lacks what nasboot's
# suites need (nf_tables, the watchdog driver, ext4 for --disk) fails at
# the config step, before anything is compiled; a failing build step (a
# Debian version that does not exist) names the step; missing QEMU firmware is named with
# its package; a board that does not reach /init within --boot-timeout is
# stopped (exit 7) with its console log kept; options the board cannot
# have (--module, --deb, a NIC model it has no driver for) are usage
# errors (exit 2) that say why and list the board's models; an unknown
# board lists the boards. Needs the board's cache (the first run builds
# it); about 30 s after that.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/beboard.sh
. "$here/../beboard.sh"
BE_NEED_BIN=0
be_setup bad-input

# run NAME ARGS...: the harness with its status in rc and its output in $work/NAME.out.
run() {
	local name=$1
	shift
	set +e
	"$@" >"$work/$name.out" 2>&1
	rc=$?
	set -e
	out=$(cat "$work/$name.out")
}

# forget_build: remove the half-made product directory the last run
# names (its log's directory, <cache>/<name>-<hash>.build).
forget_build() {
	local d
	d=$(grep -o -m1 '(log /[^ ]*\.build/build\.log)' "$work/$name.out" | sed 's/^(log //; s/\/build\.log)$//') || true
	case $d in */nasboot/*.build) rm -rf "$d" ;; esac
}

# A fragment on top of the board's that switches off nf_tables, the
# board's watchdog driver and ext4 (--disk's ext2; its lines win).
printf '# CONFIG_NF_TABLES is not set\n# CONFIG_%s is not set\n# CONFIG_EXT4_FS is not set\n' "$BE_WD_KCONFIG" >"$work/no-wd.config"
run kconfig env NASBOOT_BOARD_KCONFIG="$work/no-wd.config" "$BE_HARNESS" --board "$BE_BOARD" fetch
t_eq "kernel without nf_tables: exit 1" 1 "$rc"
t_has "kernel without nf_tables: named, with the need" "lacks CONFIG_NF_TABLES=y (needed for nasboot's firewall (nft))" "$out"
t_has "kernel without the watchdog driver: named" "lacks CONFIG_$BE_WD_KCONFIG=y (needed for the board's" "$out"
t_has "kernel without ext4: named, with the need" "lacks CONFIG_EXT4_FS=y (needed for --disk (scripts/board disk new makes ext2))" "$out"
t_has "the message names --board" "--board $BE_BOARD" "$out"
t_has "nothing was compiled" "nothing built" "$out"
name=kconfig forget_build

run step env NASBOOT_BOARD_BUSYBOX_VERSION=0.0-0 "$BE_HARNESS" --board "$BE_BOARD" fetch
t_eq "failing build step: exit 1" 1 "$rc"
t_has "failing build step: the step and the board named" "--board $BE_BOARD: apt-get source busybox=0.0-0 failed" "$out"
name=step forget_build

if [ "$BE_FIRMWARE" = 1 ]; then
	mkdir -p "$work/empty"
	run firmware env NASBOOT_QEMU_DATA="$work/empty" "$BE_HARNESS" --board "$BE_BOARD" run --timeout 20
	t_eq "missing firmware: exit 1" 1 "$rc"
	t_has "missing firmware: the file, its package and the board named" "--board $BE_BOARD: QEMU's firmware $work/empty/" "$out"
	t_has "missing firmware: its Debian package" "(Debian package " "$out"
else
	echo "GAP missing firmware: --board $BE_BOARD's QEMU loads none"
fi

run noboot "$BE_HARNESS" --board "$BE_BOARD" run --qemu-arg -S --boot-timeout 4 --timeout 60 --log "$work/noboot.log"
t_eq "no boot within --boot-timeout: exit 7" 7 "$rc"
t_has "no boot: said, with the board" "--board $BE_BOARD did not reach /init within 4s (--boot-timeout)" "$out"
t_has "no boot: the console log kept" "console log kept: $work/noboot.log" "$out"
t_check "no boot: the log is there" test -f "$work/noboot.log"

run module "$BE_HARNESS" --board "$BE_BOARD" run --module softdog
t_eq "--module on a built-in kernel: usage error 2" 2 "$rc"
t_has "--module: says why, with the board" "--board $BE_BOARD has no modules" "$out"
run deb "$BE_HARNESS" --board "$BE_BOARD" run --deb ethtool
t_eq "--deb: usage error 2" 2 "$rc"
run nic "$BE_HARNESS" --board "$BE_BOARD" run --nic pcnet
t_eq "--nic pcnet: usage error 2" 2 "$rc"
t_has "--nic: names the board, its models and the one asked for" "--board $BE_BOARD: --nic model must be one of: $BE_NICS (got 'pcnet')" "$out"
run unknown "$BE_HARNESS" --board nosuch info
t_eq "unknown board: usage error 2" 2 "$rc"
t_has "unknown board: the list" "--board must be one of:" "$out"
t_done
