#!/bin/sh
# Guest script of tests/watchdog/board-confirm.sh's vlan-sqm case: profile
# A (/etc/nasboot.toml: eth0 with an address) applied; candidate B
# (/etc/b.toml) adds a VLAN on eth0 with an address and SQM on eth0 (cake
# both ways, the ingress through an IFB), applied with `apply --confirm 3`
# and not confirmed. The board is observed before B, under B and after
# the revert: the links (names, flags, master; the carrier left out),
# addresses, routes and qdiscs, one a line, with BusyBox's ip and tc.
# After the revert it must equal what it was before B.
mkdir -p /var/lib/nasboot
# No SLAAC addresses from QEMU's router advertisements, which come on
# their own time after each link-up.
for c in default eth0; do echo 0 >"/proc/sys/net/ipv6/conf/$c/autoconf"; done
carrier() { [ "$(cat /sys/class/net/eth0/operstate)" = up ]; }
obs() {
	ip -o link show | sed -E 's/^[0-9]+: //; s/,LOWER_UP//; s/NO-CARRIER,//; s/ state [A-Z]+//' | sort
	ip -o addr show | awk '{ print "addr", $2, $3, $4 }' | sort
	ip route | sed 's/^/route /'
	tc qdisc show | sed 's/^/qdisc /' | sort
}
wait_carrier() {
	i=0
	while ! carrier && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}
nasboot apply >/tmp/a.out 2>&1 || { echo "guest: apply A failed"; cat /tmp/a.out; }
wait_carrier
obs >/tmp/A.obs
nasboot apply --confirm 3 /etc/b.toml
echo "guest: apply --confirm exit=$?"
obs >/tmp/B.obs
grep -q '^eth0\.10@eth0:' /tmp/B.obs && echo "guest: B made the VLAN eth0.10"
grep -q '^addr eth0\.10 inet 192\.168\.10\.1/24' /tmp/B.obs && echo "guest: B gave it its address"
grep -q '^qdisc qdisc cake.*eth0' /tmp/B.obs && echo "guest: B shapes eth0 with cake"
grep -q '^qdisc qdisc cake.*ifb' /tmp/B.obs && echo "guest: B shapes the ingress through an IFB"
i=0
while [ ! -f /var/lib/nasboot/confirm ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
echo "guest: journal $(sed -n 2p /var/lib/nasboot/confirm)"
sed -n 's/^note /guest: note /p' /var/lib/nasboot/confirm
wait_carrier
obs >/tmp/A2.obs
if cmp -s /tmp/A.obs /tmp/A2.obs; then
	echo "guest: after the revert the board equals A ($(wc -l </tmp/A.obs) fields)"
else
	diff /tmp/A.obs /tmp/A2.obs | sed 's/^/guest: differs: /'
fi
sed 's/^/guest: A: /' /tmp/A.obs
exit 0
