#!/usr/bin/env bash
# The OpenWrt procd script, board/init/openwrt/nasboot. procd is not here,
# so it cannot run for real: it is shellchecked, parsed by BusyBox's sh,
# and its functions are run under BusyBox's sh with procd's helpers
# recorded (start_service, reload_service, service_triggers) against the
# real nasboot binary (under a private --root, in a network namespace), so
# the instance it declares and the bad-profile path are checked. Needs root.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/pkg/sandbox.sh
. "$here/sandbox.sh"

sb_enter "$@"
sb_apt busybox-static shellcheck
bin=$(nasboot_bin)
if [ ! -x "$bin" ]; then
	t_fail "no host binary at $bin (run scripts/build host)"
	t_done
fi
script=$T_TOP/board/init/openwrt/nasboot
sb_setup nbowrt
busybox=$(command -v busybox)

t_eq "openwrt: first line hands over to rc.common" '#!/bin/sh /etc/rc.common' "$(head -n1 "$script")"
t_check "openwrt: shellcheck" shellcheck "$script"
t_check "openwrt: busybox sh -n" "$busybox" sh -n "$script"

# The binary as procd would see it, but relocated under the sandbox root.
cat >"$SB/nasboot" <<EOF2
#!/bin/sh
exec $bin --root $SB/root "\$@"
EOF2
chmod +x "$SB/nasboot"

cat >"$SB/harness" <<'EOF2'
# procd's helpers, recorded. Run as: busybox sh harness SCRIPT PROG FUNCTION
calls=$CALLS
rec() { printf '%s\n' "$*" >>"$calls"; }
procd_open_instance() { rec procd_open_instance "$@"; }
procd_set_param() { rec procd_set_param "$@"; }
procd_close_instance() { rec procd_close_instance "$@"; }
procd_send_signal() { rec procd_send_signal "$@"; }
procd_add_reload_trigger() { rec procd_add_reload_trigger "$@"; }
logger() { rec logger "$@"; }
. "$1"
rec "START=$START STOP=$STOP USE_PROCD=$USE_PROCD"
PROG=$2
"$3"
EOF2

# call FUNCTION: run it; prints the recorded calls, returns its status.
call() {
	local st
	: >"$SB/calls"
	set +e
	ip netns exec "${SB_NS}box" env -i "CALLS=$SB/calls" "$busybox" sh "$SB/harness" "$script" "$SB/nasboot" "$1" >/dev/null 2>&1
	st=$?
	set -e
	cat "$SB/calls"
	return "$st"
}

set +e
out=$(call start_service)
st=$?
set -e
t_eq "openwrt: start_service returns 0" 0 "$st"
t_has "openwrt: START 18, before firewall (19) and network (20)" "START=18 " "$out"
t_has "openwrt: USE_PROCD=1" "USE_PROCD=1" "$out"
t_has "openwrt: one instance opened" "procd_open_instance" "$out"
t_has "openwrt: the command is \`nasboot run\` in the foreground" "procd_set_param command $SB/nasboot --config /etc/nasboot.toml run" "$out"
t_has "openwrt: respawn" "procd_set_param respawn" "$out"
t_has "openwrt: the profile's checksum is watched" "procd_set_param file /etc/nasboot.toml" "$out"
t_has "openwrt: a changed profile means SIGHUP" "procd_set_param reload_signal HUP" "$out"
t_has "openwrt: the instance is closed" "procd_close_instance" "$out"

out=$(call service_triggers)
t_has "openwrt: a reload trigger" "procd_add_reload_trigger nasboot" "$out"

set +e
out=$(call reload_service)
st=$?
set -e
t_eq "openwrt: reload_service returns 0" 0 "$st"
t_has "openwrt: reload sends SIGHUP to the instance" "procd_send_signal nasboot * HUP" "$out"

printf '[board]\nname = "t"\n[firewall]\nprofile = "off"\n[sysctl]\nset = { "net.core.somaxconn" = "700" }\n' >"$SB/root/etc/nasboot.toml"
set +e
out=$(call start_service)
st=$?
set -e
t_eq "openwrt: no [watchdog]: start_service returns 0" 0 "$st"
case $out in
*procd_open_instance*) t_fail "openwrt: no [watchdog]: no instance (procd would respawn \`run\`)" ;;
*) t_ok "openwrt: no [watchdog]: no instance (procd would respawn \`run\`)" ;;
esac
t_eq "openwrt: no [watchdog]: the profile was applied once" 700 "$(cat "$SB/root/proc/sys/net/core/somaxconn")"

printf '[board]\nname = "t"\n[firewall]\nprofile = "of"\n' >"$SB/root/etc/nasboot.toml"
set +e
out=$(call start_service)
st=$?
set -e
t_check "openwrt: start_service with a broken profile fails (status $st)" test "$st" -ne 0
t_has "openwrt: the error is logged with file:line:column and key" "logger -t nasboot -p daemon.err profile rejected: nasboot: /etc/nasboot.toml:4:11: firewall.profile:" "$out"
case $out in
*procd_open_instance*) t_fail "openwrt: no instance for a broken profile" ;;
*) t_ok "openwrt: no instance for a broken profile" ;;
esac
case $out in
*"fallback firewall failed"*) t_fail "openwrt: the fallback firewall is applied: $out" ;;
*) t_ok "openwrt: the fallback firewall is applied" ;;
esac
t_check "openwrt: the board's namespace is locked down (nft: input policy drop)" sb_locked_down
set +e
out=$(call reload_service)
st=$?
set -e
t_check "openwrt: reload of a broken profile fails (status $st)" test "$st" -ne 0
case $out in
*procd_send_signal*) t_fail "openwrt: a broken profile is not signalled to the daemon" ;;
*) t_ok "openwrt: a broken profile is not signalled to the daemon" ;;
esac
t_done
