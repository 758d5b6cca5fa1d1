#!/usr/bin/env bash
# The systemd units, board/init/systemd/*.service. systemd is not PID 1
# here, so they are checked with `systemd-analyze verify` (in a private
# root holding the binary at /usr/sbin/nasboot, so the Exec lines resolve;
# a unit with a typo must fail the same verify) and for the directives the
# design relies on.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/pkg/sandbox.sh
. "$here/sandbox.sh"

command -v systemd-analyze >/dev/null || sb_apt systemd
bin=$(nasboot_bin)
units=$T_TOP/board/init/systemd
work=$(mktemp -d /tmp/nasboot-systemd.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/usr/sbin" "$work/etc/systemd/system"
if [ -x "$bin" ]; then
	cp "$bin" "$work/usr/sbin/nasboot"
else
	t_fail "no host binary at $bin (run scripts/build host)"
fi
cp "$units"/*.service "$work/etc/systemd/system/"
# verify_clean UNIT...: verify passes and says nothing (unknown keys are
# only warnings, with status 0).
verify_clean() {
	local out
	out=$(systemd-analyze verify --man=no --root="$work" "$@" 2>&1) || {
		echo "$out"
		return 1
	}
	[ -z "$out" ] || {
		echo "$out"
		return 1
	}
}
t_check "systemd: systemd-analyze verify, no warnings" \
	verify_clean "$work/etc/systemd/system/nasboot.service" "$work/etc/systemd/system/nasboot-fallback.service"
sed 's/^Type=simple/Tpye=simple/' "$units/nasboot.service" >"$work/etc/systemd/system/nasboot-typo.service"
sed 's|^ExecStart=/usr/sbin/nasboot|ExecStart=/usr/sbin/nasbot|' "$units/nasboot.service" >"$work/etc/systemd/system/nasboot-path.service"
for control in typo path; do
	if verify_clean "$work/etc/systemd/system/nasboot-$control.service" >/dev/null; then
		t_fail "systemd: verify must reject a $control (control)"
	else
		t_ok "systemd: verify rejects a $control (control)"
	fi
done

u=$(cat "$units/nasboot.service")
t_has "systemd: Type=simple" $'\nType=simple\n' "$u"
t_has "systemd: ExecStart is \`nasboot run\`" $'\nExecStart=/usr/sbin/nasboot $NASBOOT_OPTS --config ${NASBOOT_CONFIG} run\n' "$u"
t_has "systemd: the profile is checked first" $'\nExecStartPre=/usr/sbin/nasboot $NASBOOT_OPTS --config ${NASBOOT_CONFIG} check\n' "$u"
t_has "systemd: reload checks, then SIGHUP" $'ExecReload=/usr/sbin/nasboot $NASBOOT_OPTS --config ${NASBOOT_CONFIG} check\nExecReload=/bin/kill -HUP $MAINPID\n' "$u"
t_has "systemd: before network-pre.target" $'\nBefore=network-pre.target' "$u"
t_has "systemd: wants network-pre.target" $'\nWants=network-pre.target\n' "$u"
t_has "systemd: a bad profile leads to the fallback" $'\nOnFailure=nasboot-fallback.service\n' "$u"
t_has "systemd: an exit status (bad profile, failure) is not restarted: OnFailure= gets its turn" $'\nRestart=on-abnormal\n' "$u"
case $u in
*$'\nWatchdogSec='*) t_fail "systemd: WatchdogSec must stay unset (nasboot owns the watchdog)" ;;
*) t_ok "systemd: WatchdogSec unset (nasboot owns the watchdog)" ;;
esac
t_has "systemd: the fallback unit runs \`firewall lock-down\`" "ExecStart=/usr/sbin/nasboot \$NASBOOT_OPTS --config \${NASBOOT_CONFIG} firewall lock-down" "$(cat "$units/nasboot-fallback.service")"
t_done
