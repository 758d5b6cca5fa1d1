#!/usr/bin/env bash
# The real e1000 driver on the emulated MIPS 24K board (scripts/board: QEMU
# malta, Debian's mipsel kernel): the mipsel nasboot runs natively there,
# so its SIOCETHTOOL, SIOCSIF* and rtnetlink calls reach a real driver (under
# qemu-user, SIOCETHTOOL is not translated). tests/profiles/board-e1000.toml
# sets every knob away from the driver's defaults; Debian's mipsel ethtool
# and /sys read them back as witnesses: MAC, MTU, txqueuelen, rings (tx
# clamped to the driver's 4096, with a note), TSO/GSO/GRO/SG/tx-checksum
# off, pause off, the carrier waited for, the address. The driver has no
# coalescing for QEMU's 82540EM (EOPNOTSUPP from nasboot and ethtool
# alike): a note naming eth0 and the knob, exit 0. Then a ping to the LAN
# host, `plan` with nothing to do, and a re-apply that changes nothing.
# Needs root (netns, tap).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
LB_PROFILE=$T_TOP/tests/profiles/board-e1000.toml
# shellcheck source=tests/lanboard.sh
. "$here/../lanboard.sh"
LB_NICS=(e1000:tap:tap0)
LB_DEBS=(ethtool)
LB_MODULES=()
LB_WITH_MODULES=()

t_need iproute2
lb_setup e1000

cat >"$work/guest.sh" <<'GUEST'
w() { echo "guest: $1 $(tr -s ' \t\n' ' ')"; }
ethtool -g eth0 | w rings-before
nasboot plan >/tmp/plan1 2>&1
w plan-before </tmp/plan1
nasboot -v apply
echo "guest: apply-exit=$?"
ethtool -g eth0 | sed -n '/^Current/,$p' | w rings
ethtool -k eth0 | grep -E '^(tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload|scatter-gather|tx-checksumming):' | w offloads
ethtool -c eth0 2>&1 | w coalesce
ethtool -a eth0 | w pause
for f in mtu tx_queue_len address flags operstate; do echo "guest: sys $f=$(cat /sys/class/net/eth0/$f)"; done
ip -4 addr show dev eth0 | w addr
ping -c 3 -W 5 192.168.77.1 >/dev/null && echo "guest: ping ok"
nasboot plan >/tmp/plan2 2>&1
w plan-again </tmp/plan2
nasboot apply >/tmp/apply2 2>&1
echo "guest: apply2-exit=$?"
w apply-again </tmp/apply2
GUEST

lb_boot "$work/guest.sh" 120
lb_finish
t_eq "board powered off, guest script ran" 0 "$lb_rc"
lb_log_has "driver maxima read before (e1000: 4096)" 'rings-before .*Pre-set maximums: RX: 4096 .*TX: 4096'
lb_log_has "plan names the ring change" 'plan-before .*eth0.*ring'
lb_log_has "apply exit 0: a knob the driver lacks does not fail the boot" 'guest: apply-exit=0'
lb_log_has "note names the interface and the knob (82540EM: no coalescing)" 'note: eth0 coalesce: not supported by the driver'
lb_log_has "ethtool agrees: no coalescing on this driver" 'coalesce .*Operation not supported'
lb_log_has "tx ring above the maximum: note, clamped" 'note: eth0 tx_ring: 8192 is above the driver.s maximum 4096; clamped to 4096'
lb_log_has "rx ring 512, tx ring clamped to the driver's 4096" 'rings Current hardware settings: RX: 512 .*TX: 4096'
for k in tcp-segmentation-offload generic-segmentation-offload generic-receive-offload scatter-gather tx-checksumming; do
	lb_log_has "offload $k off (ethtool -k)" "offloads .*$k: off"
done
lb_log_has "pause frames off (ethtool -a)" 'pause .*Autonegotiate: off RX: off TX: off'
lb_log_has "MTU 1400" 'sys mtu=1400'
lb_log_has "txqueuelen 500" 'sys tx_queue_len=500'
lb_log_has "MAC set" 'sys address=02:00:00:00:77:02'
lb_log_has "carrier waited for: link up when apply returns" 'sys operstate=up'
lb_log_has "address 192.168.77.2/24" 'addr .*inet 192\.168\.77\.2/24'
lb_log_has "traffic to the LAN host" 'guest: ping ok'
lb_log_has "re-plan: nothing to do" 'plan-again .*nothing to do: the board matches the profile'
lb_log_has "re-apply: no action, exit 0" 'apply-again .*applied 0 action\(s\)'
lb_log_has "re-apply exit 0" 'guest: apply2-exit=0'
t_done
