# shellcheck shell=bash
# Shared by the watchdog board suites (tests/watchdog/board-*.sh): the
# mipsel static binary ($T_BOARD_TARGET, tests/lib.sh) on the emulated board (scripts/board: QEMU malta,
# Debian 4kc-malta kernel, softdog). Sourced after tests/lib.sh.
# The guest clock runs at wall speed, so a host that stalls QEMU for
# longer than the margin between pets and the timeout (2.5 s) fires
# softdog early. A failing suite prints the end of the serial log and the
# harness's output, and scripts/test runs a failed board-*.sh once more,
# keeping both runs' output: a real fault fails both.

WD_TARGET=$T_BOARD_TARGET
WD_BIN=$T_DIST/nasboot-$WD_TARGET
WD_BOARD=$T_TOP/scripts/board

# wd_setup NAME: a scratch dir in $work, removed on exit; the binary must exist.
wd_setup() {
	if [ ! -x "$WD_BIN" ]; then
		t_fail "$1: no binary at $WD_BIN (run scripts/build $WD_TARGET)"
		t_done
		exit 1
	fi
	work=$(mktemp -d "/tmp/nasboot-wd-$1.XXXXXX")
	# shellcheck disable=SC2064 # expand now: $work is fixed
	trap "rm -rf '$work'" EXIT
	"$WD_BOARD" fetch >/dev/null
}

# wd_profile FILE [EXTRA-TOML-LINES]: a profile with a 5 s watchdog.
wd_profile() {
	{
		printf '[board]\nname = "wd-test"\n[firewall]\nprofile = "off"\n[watchdog]\ntimeout = 5\n'
		if [ $# -gt 1 ]; then printf '%s\n' "$2"; fi
	} >"$1"
}

# wd_boot LOG ARGS...: boot once; sets wd_rc to the harness's exit status
# (0 poweroff, 3 script failed, 4 reset, 124 timeout; see scripts/board help).
wd_boot() {
	local log=$1
	shift
	set +e
	"$WD_BOARD" run --bin "$WD_BIN" --log "$log" --timeout 90 "$@" >"$log.harness" 2>&1
	# shellcheck disable=SC2034 # read by the suites
	wd_rc=$?
	set -e
}

# wd_log_has DESC ERE LOG
wd_log_has() {
	if grep -Eq -- "$2" "$3"; then t_ok "$1"; else t_fail "$1: /$2/ not in $3"; fi
}

# wd_log_lacks DESC ERE LOG
wd_log_lacks() {
	if grep -Eq -- "$2" "$3"; then t_fail "$1: /$2/ found in $3"; else t_ok "$1"; fi
}

# wd_line_no ERE LOG: the first line number matching (0 if none).
wd_line_no() {
	local n
	n=$(grep -En -m1 -- "$1" "$2" | cut -d: -f1)
	echo "${n:-0}"
}

# wd_keep LOG: for a failed run, show the end of the serial log and the
# harness's output (CI keeps only what is printed), and copy the log to
# target/watchdog-tests/.
wd_keep() {
	local f
	for f in "$1" "$1.harness"; do
		[ -s "$f" ] || continue
		echo "--- the last 40 lines of $f:"
		tail -n 40 "$f"
	done
	mkdir -p "$T_TOP/target/watchdog-tests"
	cp "$1" "$T_TOP/target/watchdog-tests/" 2>/dev/null || true
}
