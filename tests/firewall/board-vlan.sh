#!/usr/bin/env bash
# Bridges and VLANs made by nasboot on the emulated MIPS 24K board's own
# kernel (tests/routerboard.sh; Debian's malta kernel has 8021q and
# bridge as modules), with real traffic across them:
# tests/profiles/board-vlan.toml puts the WAN on VLAN 2 of eth0 (eth0.2)
# and the LAN on a bridge br-lan over eth1, stateful, forward = true.
# The host kernel has no 802.1Q, so the WAN host answers in user space
# (tests/board/vlan-peer.py: ARP and ICMP echo, on VLAN 2 only).
# - `nasboot apply` loads the rule set's modules with one modprobe (the
#   kernel has only the flowtable's loaded), forking no more than 8
#   processes in all (that modprobe, and the kernel's own for 8021q and
#   bridge);
# - it creates eth0.2 (802.1Q id 2 on eth0: /proc/net/vlan/eth0.2 says
#   VID 2) and br-lan (eth1 its port), both with the alias nasboot, and a
#   re-plan has no link step and no firewall step (the rule set nasboot
#   loaded, sealed, is still loaded as it was, on this Linux 6.1);
# - eth0.2 deleted: the plan creates it again and loads the firewall again
#   (the flowtable dropped the device, which is no commit), and after that
#   apply neither is left;
# - the board pings the WAN host over the VLAN, and the LAN host pings it
#   through the bridge and the VLAN, masqueraded: the WAN host sees the
#   echo requests tagged with VLAN 2, from the board's WAN address, and
#   never an untagged one.
# Needs root (namespaces, taps) and python3-scapy. About 1.5 minutes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
RB_PROFILE=$T_TOP/tests/profiles/board-vlan.toml
# shellcheck source=tests/routerboard.sh
. "$here/../routerboard.sh"
RB_WITH_MODULES+=(8021q bridge)

t_need iproute2 python3 python3-scapy
fails() { ! "$@"; }
rb_setup vlan

cat "$T_TOP/tests/board/router-up.sh" - >"$work/guest.sh" <<'GUEST'
forks() { sed -n 's/^processes //p' /proc/stat; }
f0=$(forks)
nasboot -v apply
echo "guest: apply-exit=$?"
f1=$(forks)
echo "guest: apply-forks $((f1 - f0)) measure $(($(forks) - f1))"
echo "guest: vlan $(tr -s ' \t\n' ' ' </proc/net/vlan/eth0.2 2>&1) alias $(cat /sys/class/net/eth0.2/ifalias 2>&1)"
echo "guest: bridge $(ls -d /sys/class/net/br-lan/bridge 2>&1) alias $(cat /sys/class/net/br-lan/ifalias 2>&1)"
echo "guest: brif $(ls /sys/class/net/br-lan/brif 2>&1 | tr '\n' ' ')"
echo "guest: replan $(nasboot plan 2>&1 | grep -cE '^ *[0-9]+\. (netdev|links) ')"
phases() { nasboot plan 2>&1 | sed -n 's/^ *[0-9]*\. \([a-z]*\) .*/\1/p' | sort -u | tr '\n' ' '; }
echo "guest: settled [$(phases)]"
ip link del eth0.2
echo "guest: wan gone [$(phases)]"
nasboot -q apply
echo "guest: reapply-exit=$? [$(phases)]"
i=0
while [ "$(cat /sys/class/net/br-lan/operstate 2>/dev/null)" != up ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
ping -c 2 -W 3 198.51.100.1 >/dev/null 2>&1 && echo "guest: board ping over the vlan ok"
echo "guest: applied"
nc -l -p 7000 >/dev/null
GUEST

rb_boot "$work/guest.sh" 300 || { t_fail "board started (see $log)"; t_done; }
# The WAN host answers on VLAN 2 only, from its veth's MAC; its kernel
# address stays, but the host kernel drops tagged frames.
peer_log=$work/peer.log
: >"$peer_log"
mac=$(cat "/sys/class/net/$rb_wtap/address" 2>/dev/null || ip netns exec "$rb_wan" cat "/sys/class/net/$rb_wtap/address")
ip netns exec "$rb_wan" /usr/bin/python3 "$T_TOP/tests/board/vlan-peer.py" "$rb_wtap" 2 "$RB_WAN_HOST" "$mac" "$peer_log" &
rb_bg+=($!)
if ! rb_wait_for 'guest: applied' 240; then
	t_fail "nasboot apply finished (see $log)"
	t_done
fi
rb_log_has "nasboot apply exit 0" 'guest: apply-exit=0'
# The kernel has the flowtable's modules loaded at boot, none of the rule
# set's others: the apply sees conntrack's missing and names them all to
# the kernel's modprobe in one process, where the kernel would run one or two per module it meets, and
# the batch again after each (src/firewall/modules.rs).
rb_log_has "... which loads the rule set's modules with one modprobe first" \
	'nf_tables: loaded the kernel modules the rule set needs with one /sbin/modprobe: nf_tables nft_limit nf_log_syslog nft_log nft_ct nft_fib_inet nft_masq nft_chain_nat nf_flow_table_inet nft_flow_offload[[:space:]]*$'
forks=$(tr -d '\r' <"$log" | sed -n 's/^guest: apply-forks \([0-9]*\) measure \([0-9]*\)$/\1 \2/p')
read -r n m <<<"${forks:-999 0}"
# nasboot's modprobe, the kernel's for 8021q and bridge (included, not
# loaded), the measuring subshell: 5 (the build before this preload: 70).
t_check "... and forks no more than 8 processes in all ($n, of them $m the measure's own)" test "$((n - m))" -le 8
rb_log_has "eth0.2 is an 802.1Q VLAN, id 2 on eth0, made by nasboot" 'guest: vlan eth0\.2 +VID: 2 .*Device: eth0 .*alias nasboot'
rb_log_has "br-lan is a bridge made by nasboot" 'guest: bridge /sys/class/net/br-lan/bridge alias nasboot'
rb_log_has "eth1 is br-lan's port" 'guest: brif eth1[[:space:]]*$'
rb_log_has "a re-plan has no link step left" 'guest: replan 0'
# phases_of WHAT: the plan's phases the guest printed after "guest: WHAT".
phases_of() { tr -d '\r' <"$log" | sed -n "s/^guest: $1 \[\(.*\)\]\$/\1/p" | head -n1; }
with() { [[ " $1 " == *" $2 "* ]]; }
rb_log_has "the guest planned again after the apply" 'guest: settled \['
p=$(phases_of settled)
t_check "... and no firewall step is left: the rule set nasboot loaded is still loaded as it was (its seal, Linux 6.1) [$p]" fails with "$p" firewall
rb_log_has "the guest deleted eth0.2 and planned" 'guest: wan gone \['
p=$(phases_of 'wan gone')
t_check "eth0.2 deleted: the plan creates it again [$p]" with "$p" links
t_check "... and loads the firewall again (its flowtable dropped the device, which is no commit) [$p]" with "$p" firewall
rb_log_has "that apply exits 0" 'guest: reapply-exit=0 \['
p=$(phases_of 'reapply-exit=0')
t_check "... and leaves no firewall step [$p]" fails with "$p" firewall
t_check "... and no links step [$p]" fails with "$p" links
rb_log_has "the board pings the WAN host over the VLAN" 'guest: board ping over the vlan ok'
t_check "the LAN host pings the WAN host through the bridge and the VLAN" rb_lan_host ping -c 2 -W 3 "$RB_WAN_HOST"
t_has "the WAN host sees the echo requests on VLAN 2, from the board's WAN address" "vlan 2 icmp $RB_WAN_ADDR" "$(cat "$peer_log")"
t_check "the WAN host never sees an untagged one" test -z "$(grep untagged "$peer_log" | grep icmp || true)"
t_check "the WAN host never sees the LAN host's own address" test -z "$(grep "icmp $RB_LAN_HOST" "$peer_log" || true)"
rb_lan_host bash -c 'exec 3<>/dev/tcp/192.168.1.1/7000' 2>/dev/null || true
rb_finish
t_eq "the board powered off cleanly" 0 "$rb_rc"
t_done
