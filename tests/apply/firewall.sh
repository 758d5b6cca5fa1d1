#!/bin/bash
# The perl run under the namespace is single-quoted on purpose.
# shellcheck disable=SC2016 source-path=SCRIPTDIR
# A firewall tool that hangs or crashes half-way never leaves the box open.
# In board-shaped network namespaces (prefix nbrl; scripts/lib/netns.sh),
# for nftables and iptables-restore, with wrappers put first on PATH that
# hang or crash only on nasboot's full rule set (the one with a WAN chain)
# and pass everything else to the real tool:
#
#   - the good profile first: WAN reaches ssh (opened), not port 2222
#     (not opened); LAN reaches both (lan_services = all);
#   - hang: `exec sleep 600` instead of loading. nasboot kills it at its
#     timeout (TOOL_TIMEOUT, 60 s, src/firewall/load.rs), says so, exits 1
#     and loads the fallback: LAN reaches ssh, the WAN reaches nothing.
#     One backend per run (nftables; HANG_BOTH=1 for iptables too), since
#     each costs the full 60 s;
#   - crash half-way: the wrapper feeds the real tool the first half of
#     the rule set and then kills itself with SIGSEGV; nasboot loads the
#     fallback, the WAN reaches nothing, the LAN reaches ssh.
#   - `kill -9` of `firewall apply --confirm 30` at random points (30
#     times): the loaded rule set is always exactly the old or the new
#     one, /run/nasboot/firewall.previous absent or whole, and a plain
#     apply then loads the new one.
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
cleanup() {
	fw_board_down "$P"
	rm -rf "$WORK"
}
trap cleanup EXIT
fw_packages

read -ra NB <<<"$(nasboot_for host)"
if [ ! -x "${NB[0]}" ]; then
	echo "no nasboot binary at ${NB[0]}: run scripts/build host or set NASBOOT_DIST" >&2
	exit 1
fi

box() { ip netns exec "${P}box" "$@"; }
connects() { ip netns exec "$1" socat -u OPEN:/dev/null "TCP4:$2:$3,connect-timeout=2" 2>/dev/null; }
fails() { ! "$@" >/dev/null 2>&1; }

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
	sleep 0.3
	for spec in "wan 22 $2" "wan 2222 $3" "lan 22 $4"; do
		read -r ns port want <<<"$spec"
		local host=$NETNS_WAN_BOX
		[ "$ns" = lan ] && host=$NETNS_LAN_BOX
		if [ "$want" = yes ]; then
			t_check "$desc: $ns reaches port $port" connects "${P}$ns" "$host" "$port"
		else
			t_check "$desc: $ns cannot reach port $port" fails connects "${P}$ns" "$host" "$port"
		fi
	done
	fw_stop_listeners
}

fw_board_up "$P"
backends=(nftables iptables)
for backend in "${backends[@]}"; do
	box nft flush ruleset 2>/dev/null || true
	t_check "$backend: the good profile loads" box "${NB[@]}" -q --root "$root" firewall apply --backend "$backend"
	probe "$backend: good profile" yes no yes

	if [ "$backend" = nftables ] || [ -n "${HANG_BOTH:-}" ]; then
		t0=$(date +%s)
		out=$(box env PATH="$WORK/hang:$PATH" "${NB[@]}" --root "$root" firewall apply --backend "$backend" 2>&1) && rc=0 || rc=$?
		took=$(($(date +%s) - t0))
		t_eq "$backend: hung tool: apply exits 1" 1 "$rc"
		if [ "$took" -ge 59 ] && [ "$took" -le 75 ]; then t_ok "$backend: hung tool killed at its timeout ($took s)"; else t_fail "$backend: hung tool: apply took $took s (timeout 60)"; fi
		t_has "$backend: hung tool: the timeout is said" "did not finish within 60 s" "$out"
		t_has "$backend: hung tool: the fallback is loaded" "loaded the fallback rule set instead" "$out"
		probe "$backend: after a hang" no no yes
		printf '%s\n' "$out" | sed 's/^/    hang: /' | head -4
	fi

	t_check "$backend: the good profile loads again" box "${NB[@]}" -q --root "$root" firewall apply --backend "$backend"
	out=$(box env PATH="$WORK/crash:$PATH" "${NB[@]}" --root "$root" firewall apply --backend "$backend" 2>&1) && rc=0 || rc=$?
	t_eq "$backend: tool crashing half-way: apply exits 1" 1 "$rc"
	t_has "$backend: crash: the crash is said" "was killed by a signal before it finished" "$out"
	t_has "$backend: crash: the fallback is loaded" "loaded the fallback rule set instead" "$out"
	probe "$backend: after a crash" no no yes
	printf '%s\n' "$out" | sed 's/^/    crash: /' | head -4
	box iptables -F 2>/dev/null || true
	box iptables -P INPUT ACCEPT 2>/dev/null || true
done

# kill -9 of `firewall apply --confirm 30` (nftables) at random points,
# KILLS times (default 30): from the old profile (WAN ssh) to a new one
# (WAN ssh and https). After each kill the loaded rule set is exactly the
# old or the new one (never none, never part), firewall.previous is absent
# or whole, and a plain apply then loads the new one.
KILLS=${FW_KILLS:-30}
NEW_PROFILE=$(printf '%s\n' "$PROFILE" | sed 's/^wan_services = .*/wan_services = ["ssh", "https"]/')
ruleset() { box nft list table inet nasboot 2>/dev/null | sed '/^\s*$/d'; }
box nft flush ruleset
fw_root "$root" "$NEW_PROFILE"
box "${NB[@]}" -q --root "$root" firewall apply --backend nftables
ruleset >"$WORK/rules.new"
fw_root "$root" "$PROFILE"
box "${NB[@]}" -q --root "$root" firewall apply --backend nftables
ruleset >"$WORK/rules.old"
t_check "kill -9: the old and new rule sets differ (set-up)" fails cmp -s "$WORK/rules.old" "$WORK/rules.new"
# The previous copy an unkilled run saves (it rolls back after 1 s).
fw_root "$root" "$NEW_PROFILE"
box "${NB[@]}" -q --root "$root" firewall apply --backend nftables --confirm 1 >/dev/null 2>&1 || true
cp "$root/run/nasboot/firewall.previous" "$WORK/previous.ref"
t_check "kill -9: the unconfirmed apply rolled back (set-up)" cmp -s "$WORK/rules.old" <(ruleset)
RANDOM=7
landed=0 bad_rules=0 bad_prev=0 saw_new=0
for i in $(seq 1 "$KILLS"); do
	fw_root "$root" "$PROFILE"
	box "${NB[@]}" -q --root "$root" firewall apply --backend nftables
	rm -f "$root/run/nasboot/firewall."*
	fw_root "$root" "$NEW_PROFILE"
	delay=$(((RANDOM * 32768 + RANDOM) % 90000))
	if box perl -e 'use POSIX; my $d = shift; my $pid = fork // die;
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
	elif ! cmp -s "$WORK/rules.now" "$WORK/rules.old"; then
		bad_rules=$((bad_rules + 1))
		cp "$WORK/rules.now" "$WORK/rules.bad-$i"
	fi
	prev=$root/run/nasboot/firewall.previous
	if [ -e "$prev" ] && ! cmp -s "$prev" "$WORK/previous.ref"; then bad_prev=$((bad_prev + 1)); fi
done
echo "    kill -9 of firewall apply --confirm: $KILLS runs, $landed killed while running, the new rule set loaded in $saw_new"
t_eq "kill -9 of apply --confirm: the rule set is always the old or the new one" 0 "$bad_rules"
t_eq "kill -9 of apply --confirm: firewall.previous is absent or whole" 0 "$bad_prev"
t_check "kill -9 of apply --confirm: the kills landed ($landed of $KILLS)" test "$landed" -ge $((KILLS / 2))
t_check "kill -9 of apply --confirm: some landed after the load ($saw_new of $KILLS)" test "$saw_new" -ge 1
probe "after the kills" yes no yes
t_check "kill -9: a plain apply then loads the new rule set" box "${NB[@]}" -q --root "$root" firewall apply --backend nftables
t_check "kill -9: ... which is the new one" cmp -s "$WORK/rules.new" <(ruleset)
t_done
