# shellcheck shell=bash
# Shared by the big-endian board suites (tests/*/be-*.sh): one emulated
# board of scripts/board's built kind (`--board $BE_BOARD`, default ppc:
# QEMU g3beige, a kernel, BusyBox and nft cross-built from Debian's
# sources), running that board's own static nasboot natively on its
# big-endian kernel. Sourced after tests/lib.sh.
#
# NASBOOT_BE_BOARD picks the board (scripts/test runs the be-*.sh suites
# once per board in NASBOOT_BE_BOARDS). Network namespaces and taps are
# named nbbe*, so these suites never meet another suite's.

BE_BOARD=${NASBOOT_BE_BOARD:-ppc}
BE_HARNESS=$T_TOP/scripts/board
# The nasboot build that ships for the board: the one table
# (scripts/lib/board/boards.sh); "unknown" for a board of no be-suite.
BE_TARGET=$("$BE_HARNESS" --board "$BE_BOARD" target 2>/dev/null) || BE_TARGET=unknown
# BE_WD_IDENTITY: the hardware watchdog's WDIOC_GETSUPPORT identity;
# BE_WD_FIRED: what the console says when it resets the board ('' when
# QEMU just leaves, as with i6300esb); BE_WD_KCONFIG: its kernel option;
# BE_FIRMWARE: 1 when the board's QEMU loads firmware files; BE_NICS: the
# --nic models scripts/board takes for it; BE_NIC2 and BE_NIC2_DRIVER: the
# NIC suite's second NIC (eth1) and its kernel driver.
# shellcheck disable=SC2034 # read by the suites
case $BE_BOARD in
ppc)
	BE_WD_IDENTITY='i6300ESB timer'
	BE_WD_FIRED=''
	BE_WD_KCONFIG=I6300ESB_WDT
	BE_FIRMWARE=1
	BE_NICS=e1000
	BE_NIC2=e1000
	BE_NIC2_DRIVER=e1000
	;;
mips-be)
	BE_WD_IDENTITY='Software Watchdog'
	BE_WD_FIRED='softdog: Initiating system reboot'
	BE_WD_KCONFIG=SOFT_WATCHDOG
	BE_FIRMWARE=0
	BE_NICS=e1000
	BE_NIC2=e1000
	BE_NIC2_DRIVER=e1000
	;;
sparc64)
	BE_WD_IDENTITY='i6300ESB timer'
	# -watchdog-action poweroff: QEMU just leaves.
	BE_WD_FIRED=''
	BE_WD_KCONFIG=I6300ESB_WDT
	BE_FIRMWARE=1
	BE_NICS='e1000 sunhme'
	# The sun4u's own Happy Meal; the kernel names it after the e1000s.
	BE_NIC2=sunhme
	BE_NIC2_DRIVER=hme
	;;
*) BE_TARGET=unknown ;;
esac
BE_BIN=$T_DIST/nasboot-$BE_TARGET
be_ns_list=()
be_pids=()

# be_board ARGS...: scripts/board for the suite's board.
be_board() { "$BE_HARNESS" --board "$BE_BOARD" "$@"; }

# be_setup NAME: (BE_NEED_BIN=0: a suite that runs no nasboot) scratch dir $work (removed on exit; the logs of a failed
# run are kept in target/board-tests/), the binary, the board's cache
# (the first run builds the kernel, BusyBox and nft: see board/README.md).
be_setup() {
	be_name=$1
	work=$(mktemp -d "/tmp/nasboot-be-$BE_BOARD-$1.XXXXXX")
	trap be_cleanup EXIT
	if [ "$BE_TARGET" = unknown ]; then
		t_fail "$1: no nasboot target for board '$BE_BOARD' (tests/beboard.sh)"
		exit 1
	fi
	if [ "${BE_NEED_BIN:-1}" = 1 ] && [ ! -x "$BE_BIN" ]; then
		t_fail "$1: no binary at $BE_BIN (run scripts/build $BE_TARGET)"
		exit 1
	fi
	if ! be_board fetch >"$work/fetch.out" 2>&1; then
		cat "$work/fetch.out" >&2
		t_fail "$1: --board $BE_BOARD could not be made ready (above)"
		exit 1
	fi
}

be_cleanup() {
	local p ns
	for p in "${be_pids[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	for ns in "${be_ns_list[@]}"; do
		ip netns del "$ns" 2>/dev/null || true
	done
	if [ "${T_FAIL:-0}" != 0 ]; then
		local keep=$T_TOP/target/board-tests/be-$BE_BOARD-$be_name
		mkdir -p "$keep"
		cp "$work"/*.log "$work"/*.harness "$keep/" 2>/dev/null || true
		echo "console logs kept in $keep" >&2
	fi
	rm -rf "$work"
}

# be_ns NAME: a network namespace (deleted on exit).
be_ns() {
	ip netns add "$1"
	ip -n "$1" link set lo up
	be_ns_list+=("$1")
}

# be_profile FILE: the board's watchdog profile, 5 s.
be_wd_profile() {
	printf '[board]\nname = "be-%s-wd"\n[firewall]\nprofile = "off"\n[watchdog]\ntimeout = 5\n' "$BE_BOARD" >"$1"
}

# be_boot LOG TIMEOUT ARGS...: one boot in the foreground with the
# board's nasboot; be_rc is the harness's status (0 poweroff, 3 script
# failed, 4 reset, 7 no boot, 124 timeout). A board that never reached
# /init fails the suite here, naming the kept console log.
be_boot() {
	local log=$1 timeout=$2
	shift 2
	set +e
	be_board run --bin "$BE_BIN" --log "$log" --timeout "$timeout" "$@" >"$log.harness" 2>&1
	be_rc=$?
	set -e
	be_check_booted "$log"
}

# be_boot_bg NS LOG TIMEOUT ARGS...: the same in the background, in
# network namespace NS; be_wait_bg collects be_rc.
be_boot_bg() {
	local ns=$1 log=$2 timeout=$3
	shift 3
	: >"$log"
	ip netns exec "$ns" "$BE_HARNESS" --board "$BE_BOARD" run --bin "$BE_BIN" --log "$log" \
		--timeout "$timeout" "$@" >"$log.harness" 2>&1 &
	be_bg=$!
	be_pids+=("$be_bg")
	be_bg_log=$log
}

be_wait_bg() {
	set +e
	wait "$be_bg"
	be_rc=$?
	set -e
	be_pids=()
	be_check_booted "$be_bg_log"
}

be_check_booted() {
	if [ "$be_rc" = 7 ] || ! grep -q 'board: init up' "$1"; then
		t_fail "$be_name: --board $BE_BOARD did not boot to /init (status $be_rc; console log kept)"
		sed 's/^/  harness: /' "$1.harness" >&2 || true
	fi
}

# be_wait_for ERE SECONDS: wait until the background board's log matches.
be_wait_for() {
	local i
	for ((i = 0; i < $2 * 5; i++)); do
		grep -Eq -- "$1" "$be_bg_log" 2>/dev/null && return 0
		kill -0 "$be_bg" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

# be_guest_lib: the helpers a suite's guest script starts with: w NAME
# (its input as one console line, "guest: NAME ..."); nb NAME ARGS...
# (nasboot ARGS: "guest: NAME-exit=N", then its output through w).
be_guest_lib() {
	cat <<'GUEST'
w() { echo "guest: $1 $(tr -s ' \t\n' ' ')"; }
nb() { n=$1; shift; nasboot "$@" >/tmp/nb.out 2>&1; echo "guest: $n-exit=$?"; w "$n" </tmp/nb.out; }
GUEST
}

# be_has DESC ERE LOG / be_lacks DESC ERE LOG
be_has() {
	if grep -Eq -- "$2" "$3"; then t_ok "$1"; else t_fail "$1: /$2/ not in ${3##*/}"; fi
}
be_lacks() {
	if grep -Eq -- "$2" "$3"; then t_fail "$1: /$2/ found in ${3##*/}"; else t_ok "$1"; fi
}

# be_uptime ERE LOG: the guest uptime printed on the first line matching
# ERE as "uptime=N.NN" (empty if none).
be_uptime() {
	grep -E -m1 -- "$1" "$2" | sed -n 's/.*uptime=\([0-9.]*\).*/\1/p'
}
