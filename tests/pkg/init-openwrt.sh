#!/usr/bin/env bash
# The OpenWrt procd script, board/init/openwrt/nasboot. procd is not here,
# so it cannot run for real: it is shellchecked, parsed by BusyBox's sh,
# and its functions are run under BusyBox's sh with procd's helpers
# recorded (start_service, reload_service, service_triggers) against the
# real nasboot binary (under a private --root, in a network namespace), so
# the instance it declares and the bad-profile path are checked. Needs root.
# The hotplug handler (board/init/openwrt/nasboot.hotplug) re-applies the
# firewall on the real kernel when a device is added.
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

# The hotplug handler (/etc/hotplug.d/net/50-nasboot), run by BusyBox's sh
# the way procd runs it, calling the real binary on the real kernel (no
# --root: the firewall reads the links and the kernel release) through a
# wrapper that records each call.
hotplug=$T_TOP/board/init/openwrt/nasboot.hotplug
t_check "openwrt hotplug: shellcheck" shellcheck "$hotplug"
t_check "openwrt hotplug: busybox sh -n" "$busybox" sh -n "$hotplug"
printf '[board]\nname = "t"\n[[interface]]\nname = "eth0"\nrole = "wan"\n[[interface]]\nname = "eth1"\nrole = "lan"\n[firewall]\nbackend = "nftables"\n' >"$SB/hotplug.toml"
cat >"$SB/nasboot-rec" <<EOF2
#!/bin/sh
echo "\$*" >>$SB/hotplug-calls
exec $bin "\$@"
EOF2
chmod +x "$SB/nasboot-rec"
sed -e "s|^NASBOOT=.*|NASBOOT=$SB/nasboot-rec|" -e "s|^CONFIG=.*|CONFIG=$SB/hotplug.toml|" "$hotplug" >"$SB/hotplug"
: >"$SB/hotplug-calls"
# hotplug ACTION INTERFACE: one event.
hotplug() {
	ip netns exec "${SB_NS}box" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "ACTION=$1" "INTERFACE=$2" "$busybox" sh "$SB/hotplug"
}
box_rules() { ip netns exec "${SB_NS}box" nft list ruleset; }
ip netns exec "${SB_NS}box" "$bin" -q --config "$SB/hotplug.toml" firewall apply
extra=$(netns_box_extra "$SB_NS")
if [ -z "$extra" ]; then
	t_has "openwrt hotplug: lo, eth0 and eth1, all named: the ingress hooks" 'hook ingress device "eth0"' "$(box_rules)"
else
	t_has "openwrt hotplug: links the profile does not name ($extra): the input chain" 'hook input' "$(box_rules)"
fi
hotplug add lo
hotplug remove eth1
t_eq "openwrt hotplug: loopback and removals apply nothing" "" "$(cat "$SB/hotplug-calls")"
ip -n "${SB_NS}box" link add usb0 type veth peer name usb1
hotplug add usb0
t_eq "openwrt hotplug: an added device re-applies the firewall" "-q --config $SB/hotplug.toml firewall apply" "$(cat "$SB/hotplug-calls")"
t_has "openwrt hotplug: usb0 is in no zone: the input chain (policy drop)" 'hook input' "$(box_rules)"
rules=$(box_rules)
case $rules in
*"hook ingress"*) t_fail "openwrt hotplug: usb0 is in no zone: no ingress hook left" ;;
*) t_ok "openwrt hotplug: usb0 is in no zone: no ingress hook left" ;;
esac
t_done
