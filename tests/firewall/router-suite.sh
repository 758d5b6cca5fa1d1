# shellcheck shell=bash
# shellcheck disable=SC2154 # $work, $log and the rb_ variables are tests/routerboard.sh's
# The router profile on an emulated board (tests/routerboard.sh:
# RB_BOARD_NAME mipsel, Debian's kernel with its nf_flow_table modules, or
# a built big-endian board with everything built in; two NICs between a
# LAN host and a WAN host namespace), for tests/firewall/board-router.sh
# and be-router.sh. `router_suite` runs it; sourced after tests/lib.sh and
# tests/routerboard.sh. The board has no nft binary: nasboot loads the
# rule set itself, through netlink.
#
#   - before the apply, with plain routing, the WAN host reaches the LAN
#     host (so the refusals below are the firewall's doing);
#   - mipsel: with the fib expression's module (nft_fib_inet) hidden, the
#     kernel refuses the router's first `fib daddr type local` rule:
#     `nasboot firewall apply` names the rule, its key and the missing
#     module, loads the fallback and exits 1; the module back, the apply
#     below loads the router;
#   - `nasboot apply` with tests/profiles/board-router.toml (stateful,
#     forward = true, flow_offload = "auto", a port forward 2222 ->
#     192.168.1.10:22) says it loaded the flowtable through netlink;
#   - the LAN host's connections reach the WAN host from the board's WAN
#     address (masquerade), 4 MiB of bulk TCP each way (traffic from
#     tests/board/fwd-load.py on the two hosts);
#   - an open TCP flow and a UDP flow are [OFFLOAD] in the board's conntrack
#     table (the flowtable took them), and `nasboot status` counts them;
#   - the WAN host cannot open a connection to the LAN host (IPv4 and IPv6)
#     nor to the board, but the forwarded port reaches the LAN host.
# Needs root (namespaces, taps). About 2 minutes.

router_suite() {
	t_need iproute2 python3
	rb_setup suite

	cat "$T_TOP/tests/board/router-up.sh" - >"$work/guest.sh" <<'GUEST'
chmod 755 /etc/bench/ctl
# No nft on the board: nasboot loads its rules itself.
rm -f /usr/sbin/nft /usr/bin/nft /sbin/nft
command -v nft >/dev/null || echo "guest: no nft binary"
echo "guest: routed"
# Until the host sends a line to port 7000 (the built boards' BusyBox
# nc -l does not end when the peer closes: read the line through a FIFO).
mkfifo /tmp/go
nc -l -p 7000 >/tmp/go &
read -r _ </tmp/go
kill $! 2>/dev/null
# Without the fib expression's module: refused, named, the fallback.
fib=$(find /lib/modules -name 'nft_fib_inet.ko*' 2>/dev/null | head -n 1)
if [ -n "$fib" ]; then
    mv "$fib" /tmp/
    nasboot firewall apply >/tmp/nofib 2>&1
    echo "guest: nofib-exit=$?"
    echo "guest: nofib $(tr -s ' \n' ' ' </tmp/nofib)"
    mv "/tmp/${fib##*/}" "$fib"
fi
nasboot plan >/tmp/plan 2>&1
echo "guest: plan $(tr -s ' \n' ' ' </tmp/plan)"
nasboot -v apply >/tmp/apply 2>&1
rc=$?
cat /tmp/apply
echo "guest: apply-exit=$rc"
grep -q 'with the flowtable) through netlink' /tmp/apply && echo "guest: flowtable loaded through netlink"
echo "guest: applied"
while [ ! -f /tmp/bench-stop ]; do
    nc -l -p 7000 -e /etc/bench/ctl
done
echo "guest: status $(nasboot status 2>&1 | tr -s ' \n' ' ')"
[ "$rc" = 0 ]
GUEST
	# Addresses by hand first (the same as the profile's), for the check
	# before the apply; the apply then finds them in place.
	sed -i '1a ROUTER_ADDR=1' "$work/guest.sh"

	rb_boot "$work/guest.sh" 300 --file "$T_TOP/tests/board/fwd-bench-ctl.sh:/etc/bench/ctl" --file "$T_TOP/tests/board/nf-unload.sh:/etc/bench/nf-unload" ||
		{ t_fail "board started (see $log)"; t_done; }
	rb_serve "$rb_wan" serve 5201
	rb_serve "$rb_lan" listen 8080
	rb_serve "$rb_lan" listen 22
	if ! rb_wait_for 'guest: routed' 200; then
		t_fail "board came up (see $log)"
		t_done
	fi
	sleep 1
	# The control: plain routing, no rules. A WAN host with a route to the LAN
	# reaches the LAN host, so the same attempts failing later are the rules.
	t_check "no rules yet: WAN host reaches LAN host 192.168.1.10:8080" rb_load_wan connect "$RB_LAN_HOST" 8080 10
	t_check "no rules yet: WAN host reaches LAN host [fd00:1::10]:8080" rb_load_wan connect fd00:1::10 8080 10
	t_eq "no rules yet: the WAN host sees the LAN host's own address" "$RB_LAN_HOST" "$(rb_load_lan peer "$RB_WAN_HOST" 5201)"
	# Let the guest apply the profile.
	for _ in 1 2 3 4 5; do
		rb_lan_host bash -c 'exec 3<>/dev/tcp/192.168.1.1/7000 && echo go >&3' 2>/dev/null && break
		sleep 1
	done
	if ! rb_wait_for 'guest: applied' 120; then
		t_fail "nasboot apply finished (see $log)"
		t_done
	fi
	rb_log_has "the board has no nft binary" 'guest: no nft binary'
	if [ "$RB_BUILT" = 0 ]; then
		rb_log_has "no fib module: the apply exits 1" 'guest: nofib-exit=1'
		# shellcheck disable=SC2016 # the backquotes are the message's
		rb_log_has "no fib module: the rule, its key and the module named" \
			'guest: nofib .*the kernel refused `iifname \{ "eth1" \} fib daddr type local notrack` in chain raw_prerouting \(from firewall.profile\): No such file or directory.*this kernel has no `fib` expression \(nft_fib_inet'
		rb_log_has "no fib module: the fallback loaded" 'guest: nofib .*loaded the fallback rule set instead \(nftables: loopback and LAN only\)'
	fi
	rb_log_has "nasboot apply exit 0" 'guest: apply-exit=0'
	if grep -q 'guest: plan .*no nft_flow_offload' "$log"; then t_fail "plan says the kernel has no flowtable"; else t_ok "plan finds the flowtable"; fi
	rb_log_has "the rule set with the flowtable, loaded through netlink" 'guest: flowtable loaded through netlink'
	sleep 1

	t_eq "masquerade: the WAN host sees the board's WAN address" "$RB_WAN_ADDR" "$(rb_load_lan peer "$RB_WAN_HOST" 5201)"
	out=$(rb_load_lan up "$RB_WAN_HOST" 5201 4194304) || out=failed
	t_has "bulk TCP LAN -> WAN: 4 MiB arrive" "4194304 " "$out"
	out=$(rb_load_lan down "$RB_WAN_HOST" 5201 4194304) || out=failed
	t_has "bulk TCP WAN -> LAN on the LAN host's connection: 4 MiB arrive" "4194304 " "$out"

	# A TCP flow held open: its conntrack entry must be [OFFLOAD].
	rb_load_lan hold "$RB_WAN_HOST" 5201 8 >"$work/hold.out" &
	hold=$!
	rb_load_lan udp "$RB_WAN_HOST" 5201 8 >"$work/udp.out" &
	udp=$!
	sleep 4
	tport=$(head -n1 "$work/hold.out")
	uport=$(head -n1 "$work/udp.out")
	ct_t=$(rb_ctl "ct $tport")
	ct_u=$(rb_ctl "ct $uport")
	st=$(rb_ctl status)
	wait "$hold" || true
	t_check "UDP flow echoed across the board" wait "$udp"
	read -r _ n o <<<"$ct_t"
	t_check "TCP flow (sport $tport) tracked: $ct_t" [ "${n:-0}" -ge 1 ]
	t_check "TCP flow (sport $tport) is [OFFLOAD] in /proc/net/nf_conntrack: $ct_t" [ "${o:-0}" -ge 1 ]
	read -r _ n o <<<"$ct_u"
	t_check "UDP flow (sport $uport) is [OFFLOAD] in /proc/net/nf_conntrack: $ct_u" [ "${o:-0}" -ge 1 ]
	off=$(sed -n 's/.* \([0-9]*\) offloaded.*/\1/p' <<<"$st")
	t_check "nasboot status counts the offloaded flows: $st" [ "${off:-0}" -ge 2 ]

	# The WAN side as an attacker: a route to the LAN via the board.
	if rb_load_wan connect "$RB_LAN_HOST" 8080 5 2>/dev/null; then
		t_fail "WAN host cannot open a connection to LAN host 192.168.1.10:8080"
	else
		t_ok "WAN host cannot open a connection to LAN host 192.168.1.10:8080"
	fi
	if rb_load_wan connect fd00:1::10 8080 5 2>/dev/null; then
		t_fail "WAN host cannot open a connection to LAN host [fd00:1::10]:8080"
	else
		t_ok "WAN host cannot open a connection to LAN host [fd00:1::10]:8080"
	fi
	if rb_load_wan connect "$RB_WAN_ADDR" 7000 5 2>/dev/null; then
		t_fail "WAN host cannot open a connection to the board (198.51.100.2:7000, which listens)"
	else
		t_ok "WAN host cannot open a connection to the board (198.51.100.2:7000, which listens)"
	fi
	t_check "the forwarded port 198.51.100.2:2222 reaches the LAN host's :22" rb_load_wan connect "$RB_WAN_ADDR" 2222 10

	rb_ctl stop >/dev/null
	rb_finish
	t_eq "board: guest script passed, board powered off" 0 "$rb_rc"
	rb_log_has "status at the end names the forwarding line" 'guest: status .*forwarding: [0-9]+ tracked'
	rb_log_has "status at the end: nftables through netlink, the rules loaded" "guest: status .*nftables through netlink, nasboot's rules loaded"
}
