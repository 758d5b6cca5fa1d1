#!/bin/bash
# The perl run under the namespace is single-quoted on purpose.
# shellcheck disable=SC2016 source-path=SCRIPTDIR
# A firewall load that fails half-way never leaves the box open. In
# board-shaped network namespaces (prefix nbrl; scripts/lib/netns.sh), for
# nftables and iptables-restore. The host binary loads nftables itself,
# through netlink (the native path), and runs with no nft on its PATH
# (t_path_without_nft) except where a case below says otherwise:
#
#   - the good profile first: WAN reaches ssh (opened), not port 2222
#     (not opened); LAN reaches both (lan_services = all). nftables says
#     it loaded "through netlink";
#   - batches the kernel refuses (nftables, native):
#     - every batch: `ip nasboot_nat`, which the rule set and the nftables
#       fallback both replace, is held by another socket as its owner
#       (NFT_TABLE_F_OWNER, Linux 5.12; tests/firewall/own-table.py).
#       nasboot names the table, loads the fallback with iptables-restore
#       and exits 1: LAN reaches ssh, the WAN reaches nothing. With that
#       fallback removed the rule set from before is there, whole (the
#       WAN reaches ssh again): the refused batches changed nothing;
#     - the rule set only: a second WAN, eth9, which the namespace does
#       not have, on the ingress hooks (`hook = "ingress"`). Where the
#       kernel refuses a hook on a device that is not there, nasboot names
#       eth9's chain and its profile key, loads the fallback (through
#       netlink too) and exits 1: LAN reaches ssh, the WAN reaches
#       nothing. Newer kernels (6.18 does) keep the hook for when the
#       device comes: the rule set loads, exit 0, and the WAN that is
#       there reaches ssh and not 2222;
#   - a tool that hangs or crashes half-way: wrappers put first on PATH
#     hang or crash only on nasboot's full rule set (the one with a WAN
#     chain) and pass everything else to the real tool. Only the tool
#     path runs a tool, so the nftables cases run with `--loader nft`
#     (nft loads the rule set and the fallback; a good load with it says
#     `with nft (loader = "nft")`):
#     - hang: `exec sleep 600` instead of loading. nasboot kills it at its
#       timeout (TOOL_TIMEOUT, 60 s, src/firewall/load.rs), says so, exits
#       1 and loads the fallback: LAN reaches ssh, the WAN reaches nothing.
#       One backend per run (nftables; HANG_BOTH=1 for iptables too),
#       since each costs the full 60 s;
#     - crash half-way: the wrapper feeds the real tool the first half of
#       the rule set and then kills itself with SIGSEGV; nasboot loads the
#       fallback, the WAN reaches nothing, the LAN reaches ssh.
#   - `kill -9` of `firewall apply --confirm 30` (nftables, native) at
#     random points (30 times), spread over twice a plain apply's time so
#     that some land before the load and some after it: the loaded rule
#     set is always exactly the old or the new one,
#     /run/nasboot/firewall.previous absent or whole, and a plain apply
#     then loads the new one. The native path runs no process that could
#     hang or crash (but one modprobe first where the kernel has not
#     loaded the rule set's modules yet: src/firewall/modules.rs, which
#     the kernel would run itself); killing nasboot itself is its crash
#     half-way. The rollback lives in the waiting process, so a
#     `--confirm` apply killed after its load leaves the new rule set
#     loaded and unconfirmed, with a stale firewall.pending: never a
#     partial or open rule set, but nothing brings the previous one back.
# Real traffic: socat TCP connections from the LAN and WAN namespaces.
# About 100 s (one hang).
#
#   tests/apply/firewall.sh            # uses $NASBOOT_DIST or target/dist
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib.sh
. "$TOP/tests/lib.sh"
# shellcheck source=scripts/lib/netns.sh
. "$TOP/scripts/lib/netns.sh"
# shellcheck source=tests/firewall/lib.sh
. "$TOP/tests/firewall/lib.sh"

P=nbrl
WORK=$(mktemp -d /tmp/nasboot-rlfw.XXXXXX)
OWNER_PID=
cleanup() {
	[ -n "$OWNER_PID" ] && kill "$OWNER_PID" 2>/dev/null
	fw_board_down "$P"
	rm -rf "$WORK"
}
trap cleanup EXIT
fw_packages
t_need python3

host_nasboot

box() { ip netns exec "${P}box" "$@"; }
# native ARGS...: the host binary in the box, with no nft on its PATH.
NONFT=$(t_path_without_nft "$WORK/nonft")
NATIVE=$(t_native_or_tool host)
native() { box env PATH="$NONFT" "${NB[@]}" "$@"; }
connects() { ip netns exec "$1" socat -u OPEN:/dev/null "TCP4:$2:$3,connect-timeout=2" 2>/dev/null; }
fails() { ! "$@" >/dev/null 2>&1; }
# iptables_clean: remove what an iptables rule set or fallback left.
iptables_clean() {
	local t
	for t in iptables ip6tables; do
		box "$t" -P INPUT ACCEPT 2>/dev/null || true
		box "$t" -P FORWARD ACCEPT 2>/dev/null || true
		box "$t" -F 2>/dev/null || true
		box "$t" -X 2>/dev/null || true
	done
}

PROFILE='[board]
name = "rl-board"
[[interface]]
name = "eth0"
role = "wan"
[[interface]]
name = "eth1"
role = "lan"
[firewall]
hook = "input"
wan_services = ["ssh"]
'
root=$WORK/root
fw_root "$root" "$PROFILE"
# A second WAN, eth9, which the namespace does not have, on the ingress hooks.
REFUSED_PROFILE=$(printf '%s' "$PROFILE" | sed 's/^hook = .*/hook = "ingress"/')'
[[interface]]
name = "eth9"
role = "wan"
'
fw_root "$WORK/refused" "$REFUSED_PROFILE"

# The wrappers: WRAP/MODE/TOOL, MODE hang or crash. The marker of the full
# rule set: its WAN chain.
for mode in hang crash; do
	mkdir -p "$WORK/$mode"
	for tool in nft iptables-restore ip6tables-restore; do
		real=/usr/sbin/$tool
		cat >"$WORK/$mode/$tool" <<EOF
#!/bin/bash
# Fault injection ($mode) for tests/apply/firewall.sh.
in=\$(cat)
case \$in in
*"chain wan"* | *"-A nasboot-wan "*)
	if [ $mode = hang ]; then exec sleep 600; fi
	lines=\$(printf '%s\n' "\$in" | wc -l)
	printf '%s\n' "\$in" | head -n \$((lines / 2)) | "$real" "\$@" >/dev/null 2>&1
	kill -SEGV \$\$
	;;
esac
printf '%s\n' "\$in" | exec "$real" "\$@"
EOF
		chmod +x "$WORK/$mode/$tool"
	done
done

probe() { # probe DESC WAN22 WAN2222 LAN22: expected yes/no for each
	local desc=$1 ns port want
	fw_listen "${P}box" -u "TCP4-LISTEN:22,fork,reuseaddr" OPEN:/dev/null
	fw_listen "${P}box" -u "TCP4-LISTEN:2222,fork,reuseaddr" OPEN:/dev/null
	fw_listening "${P}box" tcp:22 tcp:2222
	# Side by side, each with its own bound (fw_bg_check).
	for spec in "wan 22 $2" "wan 2222 $3" "lan 22 $4"; do
		read -r ns port want <<<"$spec"
		local host=$NETNS_WAN_BOX
		[ "$ns" = lan ] && host=$NETNS_LAN_BOX
		if [ "$want" = yes ]; then
			fw_bg_check "$desc: $ns reaches port $port" connects "${P}$ns" "$host" "$port"
		else
			fw_bg_check "$desc: $ns cannot reach port $port" fails connects "${P}$ns" "$host" "$port"
		fi
	done
	fw_bg_done
	fw_stop_listeners
}

fw_board_up "$P"
backends=(nftables iptables)
for backend in "${backends[@]}"; do
	box nft flush ruleset 2>/dev/null || true
	out=$(native --root "$root" firewall apply --backend "$backend" 2>&1) && rc=0 || rc=$?
	t_eq "$backend: the good profile loads with no nft on PATH ($out)" 0 "$rc"
	[ "$backend" = nftables ] && t_has "nftables: it says it loaded $NATIVE" "$NATIVE: ok" "$out"
	probe "$backend: good profile" yes no yes

	# The tool path for the faults: nft (--loader nft), iptables-restore.
	tool=iptables-restore loader=()
	if [ "$backend" = nftables ]; then
		tool=nft loader=(--loader nft)

		# Every batch refused: `ip nasboot_nat` held by another socket.
		mkfifo "$WORK/owner.in"
		box python3 "$TOP/tests/firewall/own-table.py" ip nasboot_nat <"$WORK/owner.in" >"$WORK/owner.out" &
		OWNER_PID=$!
		exec 4>"$WORK/owner.in"
		for _ in $(seq 50); do grep -q held "$WORK/owner.out" 2>/dev/null && break; sleep 0.1; done
		out=$(native --root "$root" firewall apply 2>&1) && rc=0 || rc=$?
		t_eq "nftables: every batch refused (ip nasboot_nat held): apply exits 1" 1 "$rc"
		t_has "held: the table is named" "nf_tables: the kernel refused table ip nasboot_nat: Operation not permitted" "$out"
		t_has "held: the fallback is loaded with iptables-restore" "loaded the fallback rule set instead (iptables: loopback and LAN only)" "$out"
		probe "nftables: every batch refused" no no yes
		printf '%s\n' "$out" | sed 's/^/    held: /' | head -4
		exec 4>&-
		wait "$OWNER_PID" 2>/dev/null || true
		OWNER_PID=
		iptables_clean
		probe "held: the iptables fallback removed, the rule set before is still there" yes no yes

		# The rule set refused, the fallback not: an ingress hook on eth9,
		# where this kernel refuses a hook on a device that is not there.
		# Newer kernels keep it for when the device comes.
		if box nft -f - 2>/dev/null <<-'EOF'; then
			table inet nbrlprobe {
				chain c {
					type filter hook ingress device "eth9" priority 0; policy accept;
				}
			}
		EOF
			box nft delete table inet nbrlprobe
			echo "    this kernel ($(uname -r)) takes an ingress hook on a device that is not there: eth9's chain loads"
			out=$(native --root "$WORK/refused" firewall apply 2>&1) && rc=0 || rc=$?
			t_eq "nftables: a WAN that is not there, on the ingress hooks: the kernel takes it, exit 0 ($out)" 0 "$rc"
			probe "nftables: ingress hooks, one WAN not there" yes no yes
		else
			out=$(native --root "$WORK/refused" firewall apply 2>&1) && rc=0 || rc=$?
			t_eq "nftables: a batch the kernel refuses (eth9 not there): apply exits 1" 1 "$rc"
			t_has "refused: the chain is named" 'nf_tables: the kernel refused chain wan_in1 (type filter hook ingress device "eth9"' "$out"
			t_has "refused: with its profile key" "(from firewall.hook)" "$out"
			t_has "refused: the fallback is loaded (nftables, so through netlink)" "loaded the fallback rule set instead (nftables: loopback and LAN only)" "$out"
			probe "nftables: after a refused batch" no no yes
			printf '%s\n' "$out" | sed 's/^/    refused: /' | head -4
		fi
	fi

	if [ "$backend" = nftables ] || [ -n "${HANG_BOTH:-}" ]; then
		t0=$(date +%s)
		out=$(box env PATH="$WORK/hang:$PATH" "${NB[@]}" --root "$root" firewall apply --backend "$backend" "${loader[@]}" 2>&1) && rc=0 || rc=$?
		took=$(($(date +%s) - t0))
		t_eq "$backend: hung $tool: apply exits 1" 1 "$rc"
		if [ "$took" -ge 59 ] && [ "$took" -le 75 ]; then t_ok "$backend: hung $tool killed at its timeout ($took s)"; else t_fail "$backend: hung $tool: apply took $took s (timeout 60)"; fi
		t_has "$backend: hung $tool: the timeout is said" "$tool did not finish within 60 s" "$out"
		t_has "$backend: hung $tool: the fallback is loaded" "loaded the fallback rule set instead ($backend:" "$out"
		probe "$backend: after a hang" no no yes
		printf '%s\n' "$out" | sed 's/^/    hang: /' | head -4
	fi

	out=$(box "${NB[@]}" --root "$root" firewall apply --backend "$backend" "${loader[@]}" 2>&1) && rc=0 || rc=$?
	t_eq "$backend: the good profile loads again with $tool" 0 "$rc"
	[ "$backend" = nftables ] && t_has "nftables: --loader nft: it says it loaded with nft" 'with nft (loader = "nft"): ok' "$out"
	out=$(box env PATH="$WORK/crash:$PATH" "${NB[@]}" --root "$root" firewall apply --backend "$backend" "${loader[@]}" 2>&1) && rc=0 || rc=$?
	t_eq "$backend: $tool crashing half-way: apply exits 1" 1 "$rc"
	t_has "$backend: crash: the crash is said" "$tool was killed by a signal before it finished" "$out"
	t_has "$backend: crash: the fallback is loaded" "loaded the fallback rule set instead ($backend:" "$out"
	probe "$backend: after a crash" no no yes
	printf '%s\n' "$out" | sed 's/^/    crash: /' | head -4
	iptables_clean
done

# kill -9 of `firewall apply --confirm 30` (nftables, native) at random
# points, KILLS times (default 30): from the old profile (WAN ssh) to a new
# one (WAN ssh and https). After each kill the loaded rule set is exactly
# the old or the new one (never none, never part), firewall.previous is
# absent or whole, and a plain apply then loads the new one.
KILLS=${FW_KILLS:-30}
NEW_PROFILE=$(printf '%s\n' "$PROFILE" | sed 's/^wan_services = .*/wan_services = ["ssh", "https"]/')
ruleset() { box nft list table inet nasboot 2>/dev/null | sed '/^\s*$/d'; }
box nft flush ruleset
fw_root "$root" "$NEW_PROFILE"
native -q --root "$root" firewall apply --backend nftables
ruleset >"$WORK/rules.new"
fw_root "$root" "$PROFILE"
native -q --root "$root" firewall apply --backend nftables
ruleset >"$WORK/rules.old"
t_check "kill -9: the old and new rule sets differ (set-up)" fails cmp -s "$WORK/rules.old" "$WORK/rules.new"
# The previous copy an unkilled run saves (it rolls back after 1 s).
fw_root "$root" "$NEW_PROFILE"
native -q --root "$root" firewall apply --backend nftables --confirm 1 >/dev/null 2>&1 || true
cp "$root/run/nasboot/firewall.previous" "$WORK/previous.ref"
t_check "kill -9: the unconfirmed apply rolled back (set-up)" cmp -s "$WORK/rules.old" <(ruleset)
# A plain apply's time (the load, then the exit), to spread the kills over
# twice that: the --confirm apply loads at about the same point. Every
# other kill comes within the first tenth of it, where the load has not
# begun (the start, the profile): spread evenly, too few landed there in
# a run on a loaded machine (0 of 30).
t0=$(date +%s%N)
native -q --root "$root" firewall apply --backend nftables
span=$((($(date +%s%N) - t0) / 500))
RANDOM=7
landed=0 bad_rules=0 bad_prev=0 saw_new=0 saw_old=0
for i in $(seq 1 "$KILLS"); do
	fw_root "$root" "$PROFILE"
	native -q --root "$root" firewall apply --backend nftables
	rm -f "$root/run/nasboot/firewall."*
	fw_root "$root" "$NEW_PROFILE"
	delay=$(((RANDOM * 32768 + RANDOM) % (i % 2 ? span / 10 + 1 : span)))
	if box env PATH="$NONFT" perl -e 'use POSIX; my $d = shift; my $pid = fork // die;
		if (!$pid) { setpgid(0, 0); exec @ARGV or die "exec: $!" }
		select(undef, undef, undef, $d / 1e6);
		my $alive = waitpid($pid, WNOHANG) == 0;
		kill "KILL", -$pid; waitpid($pid, 0); exit($alive ? 0 : 1)' "$delay" \
		"${NB[@]}" -q --root "$root" firewall apply --backend nftables --confirm 30 >/dev/null 2>&1; then
		landed=$((landed + 1))
	fi
	ruleset >"$WORK/rules.now"
	if cmp -s "$WORK/rules.now" "$WORK/rules.new"; then
		saw_new=$((saw_new + 1))
	elif cmp -s "$WORK/rules.now" "$WORK/rules.old"; then
		saw_old=$((saw_old + 1))
	else
		bad_rules=$((bad_rules + 1))
		echo "    kill $i: the rule set is neither the old nor the new one; against the new one:"
		diff "$WORK/rules.new" "$WORK/rules.now" | head -8 | sed 's/^/      /' || true
	fi
	prev=$root/run/nasboot/firewall.previous
	if [ -e "$prev" ] && ! cmp -s "$prev" "$WORK/previous.ref"; then bad_prev=$((bad_prev + 1)); fi
done
echo "    kill -9 of firewall apply --confirm: $KILLS runs over 0-$((span / 1000)) ms, $landed killed while running; then the old rule set in $saw_old, the new one in $saw_new"
t_eq "kill -9 of apply --confirm: the rule set is always the old or the new one" 0 "$bad_rules"
t_eq "kill -9 of apply --confirm: firewall.previous is absent or whole" 0 "$bad_prev"
t_check "kill -9 of apply --confirm: the kills landed ($landed of $KILLS)" test "$landed" -ge $((KILLS / 2))
t_check "kill -9 of apply --confirm: some landed before the load ($saw_old of $KILLS)" test "$saw_old" -ge 1
t_check "kill -9 of apply --confirm: some landed after the load ($saw_new of $KILLS)" test "$saw_new" -ge 1
probe "after the kills" yes no yes
t_check "kill -9: a plain apply then loads the new rule set" native -q --root "$root" firewall apply --backend nftables
t_check "kill -9: ... which is the new one" cmp -s "$WORK/rules.new" <(ruleset)
t_done
