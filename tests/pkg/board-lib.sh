# shellcheck shell=bash
# Host side shared by the init-script suites on the emulated board
# (tests/pkg/board-init.sh, tests/pkg/board-debian.sh): boot the board
# with the mipsel binary, the guest checks (tests/pkg/board-guest-lib.sh,
# put at /board/pkgtest-lib.sh) and a guest script, then count the
# "pkgtest: ok|FAIL|GAP" lines of the serial log. Sourced after
# tests/lib.sh.

PKGB_BIN=$T_DIST/nasboot-$T_BOARD_TARGET # tests/lib.sh
PKGB_BOARD=$T_TOP/scripts/board

# pkgb_setup NAME: the binary is there, a scratch dir $work (removed on
# exit), the board's kernel and busybox cached.
pkgb_setup() {
	if [ ! -x "$PKGB_BIN" ]; then
		t_fail "no binary at $PKGB_BIN (run scripts/build $T_BOARD_TARGET)"
		t_done
	fi
	work=$(mktemp -d "/tmp/nasboot-$1.XXXXXX")
	pkgb_name=$1
	trap 'rm -rf "$work"' EXIT
	"$PKGB_BOARD" fetch >/dev/null
}

# pkgb_run GUEST-SCRIPT TIMEOUT [RUN-ARGS...]: boot once, wait for the
# power-off, then turn the guest's lines into t_ok/t_fail (GAP lines are
# printed and counted apart). Sets pkgb_log (the serial log).
pkgb_run() {
	local script=$1 timeout=$2 rc outcome line gaps=0
	shift 2
	pkgb_log=$work/serial.log
	set +e
	"$PKGB_BOARD" run --bin "$PKGB_BIN" \
		--file "$T_TOP/tests/pkg/board-guest-lib.sh:/board/pkgtest-lib.sh" \
		--script "$script" --timeout "$timeout" \
		--log "$pkgb_log" --result "$work/result" "$@" >"$work/harness.log" 2>&1
	rc=$?
	set -e
	outcome=$(sed -n 's/^outcome=//p' "$work/result" 2>/dev/null)
	t_eq "board: it powered off, no reset (harness status $rc)" poweroff "$outcome"
	t_check "board: the guest checks ran to the end" grep -q '^pkgtest: done' "$pkgb_log"
	grep -a '^pkgtest: probe' "$pkgb_log" || true
	while IFS= read -r line; do
		case $line in
		'pkgtest: ok '*) t_ok "board: ${line#pkgtest: ok }" ;;
		'pkgtest: FAIL '*) t_fail "board: ${line#pkgtest: FAIL }" ;;
		'pkgtest: GAP '*)
			gaps=$((gaps + 1))
			printf 'GAP  board: %s\n' "${line#pkgtest: GAP }"
			;;
		esac
	done < <(tr -d '\r' <"$pkgb_log")
	echo "board: $gaps known gap(s)"
}

# pkgb_keep: on a failure, show the end of the serial log and the
# harness's output (CI keeps only what is printed) and keep both in
# target/pkg-tests/.
pkgb_keep() {
	[ "$T_FAIL" -gt 0 ] || return 0
	local f
	for f in "$pkgb_log" "$work/harness.log"; do
		[ -s "$f" ] || continue
		echo "--- the last 40 lines of $f:"
		tr -d '\r' <"$f" | tail -n 40
	done
	mkdir -p "$T_TOP/target/pkg-tests"
	cp "$pkgb_log" "$T_TOP/target/pkg-tests/$pkgb_name.log"
	cp "$work/harness.log" "$T_TOP/target/pkg-tests/$pkgb_name.harness" 2>/dev/null || true
	echo "serial log kept in target/pkg-tests/$pkgb_name.log"
}
