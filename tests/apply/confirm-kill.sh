#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# `kill -9` at random points of `apply --confirm 1 B` (profiles A and B of
# tests/apply/confirm-lib.sh), KILL_RUNS times (default 200), in random
# order over four phases:
#
#   apply    the `apply --confirm` process, 0 to 50 ms after its start (about its run time here):
#            before its journal is written, or during the candidate's apply
#   wait     the holder, while it waits for the deadline
#   revert   the holder, 0 to 300 ms after the deadline: during the revert
#   confirm  `nasboot confirm` runs first, then the holder is killed
#
# After each kill the next `nasboot apply` (or, one run in four, `nasboot
# run`), retried every 0.1 s while a candidate is pending (before its
# deadline `apply` refuses with exit 2 and `run` applies the candidate;
# both start a holder again, whose revert may come first), must bring the
# board to
# A's observation (tests/apply/confirm-lib.sh's cf_observe: links,
# addresses, routes, the rule set, sysctls, qdiscs, exports), or to B's
# after a confirm: never a mix. The phase a kill landed in is told by what
# it left (no journal, a pending journal while the apply ran, ...), and
# the counts of each outcome per phase are printed.
#
# Four boards in parallel (prefixes nbck0 to nbck3), each in network
# namespaces of its own. About 2 minutes on 2 cores.
#
#   tests/apply/confirm-kill.sh        # uses $NASBOOT_DIST or target/dist
set -eu
# shellcheck source=confirm-lib.sh
. "$(dirname "$0")/confirm-lib.sh"
RUNS=${KILL_RUNS:-200}
WORKERS=4
TOPW=$(mktemp -d /tmp/nasboot-confirm-kill.XXXXXX)
trap 'st=$?; for i in $(seq 0 $((WORKERS - 1))); do netns_board_down "nbck$i"; done; for p in $(pgrep -f -- "-r $TOPW/" || true); do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$TOPW"; exit $st' EXIT

# One board's share of the runs; one line per run: PHASE OUTCOME.
worker() {
	local i=$1 n=$2 run phase pid t0 st outcome conv
	P=nbck$i
	W=$TOPW/w$i
	R=$W/root
	mkdir -p "$W"
	cp "${NB[0]}" "$W/nasboot"
	cf_init
	cf_setup >/dev/null
	cf_reset_a
	cf_observe >"$W/A.obs"
	nb apply --confirm 1 /etc/b.toml >/dev/null 2>&1
	nb confirm >/dev/null
	cf_observe >"$W/B.obs"
	for run in $(seq 1 "$n"); do
		cf_reset_a
		phase=$(printf 'apply\nwait\nrevert\nconfirm\n' | shuf -n1)
		t0=$(cf_now_ms)
		# A simple command, not the nb function: the background child
		# execs ip, which execs env, which execs nasboot, so $! is
		# nasboot's pid (a function would leave a subshell between).
		ip netns exec "${P}box" env PATH="$NONFT" "$W/nasboot" -r "$R" apply --confirm 1 /etc/b.toml >/dev/null 2>&1 &
		pid=$!
		case $phase in
		apply)
			sleep "0.$(printf '%03d' $((RANDOM % 50)))"
			if kill -9 "$pid" 2>/dev/null; then
				if [ -e "$R/var/lib/nasboot/confirm.pending" ]; then phase=apply-journaled; else phase=apply-before-journal; fi
			else
				phase=apply-after-return
			fi
			wait "$pid" 2>/dev/null || true
			;;
		wait | revert | confirm)
			wait "$pid" 2>/dev/null || true
			if [ "$phase" = confirm ] && ! nb confirm >/dev/null 2>>"$W/confirm.err"; then
				echo "run $run: confirm failed: $(tail -1 "$W/confirm.err")" >&2
			fi
			if [ "$phase" = revert ]; then
				local until=$((t0 + 1000 + RANDOM % 300 - $(cf_now_ms)))
				[ "$until" -gt 0 ] && sleep "$((until / 1000)).$(printf '%03d' $((until % 1000)))"
			else
				sleep "0.$(printf '%03d' $((RANDOM % 800)))"
			fi
			cf_kill_holders
			;;
		esac
		# The next start converges: `apply`, or `run` one time in four.
		conv=apply
		[ $((RANDOM % 4)) = 0 ] && conv=run
		# Before the deadline `apply` refuses (exit 2) and `run` applies the
		# pending candidate; either restarts a holder. Once the journal is
		# settled, one more start must leave the board as it is.
		for _ in $(seq 1 30); do
			nb "$conv" >/dev/null 2>&1 && st=0 || st=$?
			[ "$st" != 2 ] && [ ! -e "$R/var/lib/nasboot/confirm.pending" ] && break
			sleep 0.1
		done
		cf_kill_holders
		cf_observe >"$W/now.obs"
		if cmp -s "$W/now.obs" "$W/A.obs"; then
			outcome=A
		elif cmp -s "$W/now.obs" "$W/B.obs"; then
			outcome=B
		else
			outcome=mixed
		fi
		if [ "$phase" = confirm ]; then want=B; else want=A; fi
		if [ "$outcome" != "$want" ]; then
			{
				echo "run $run: $phase, converged by $conv (exit $st), want $want"
				diff "$W/$want.obs" "$W/now.obs"
			} >"$W/mixed.$run" || true
		fi
		echo "$phase $outcome $want $conv $st"
	done
}

per=$(((RUNS + WORKERS - 1) / WORKERS))
for i in $(seq 0 $((WORKERS - 1))); do
	worker "$i" "$per" >"$TOPW/out.$i" 2>"$TOPW/err.$i" &
done
wait
cat "$TOPW"/out.* >"$TOPW/all"
total=$(wc -l <"$TOPW/all")
echo "kills: $total; per phase and outcome:"
awk '{ c[$1 " -> " $2]++ } END { for (k in c) printf "  %-28s %d\n", k, c[k] }' "$TOPW/all" | sort
mixed=$(awk '$2 == "mixed"' "$TOPW/all" | wc -l)
wrong=$(awk '$2 != $3' "$TOPW/all" | wc -l)
if [ "$wrong" != 0 ]; then cat "$TOPW"/w*/mixed.*; fi
t_check "at least $RUNS kills ($total)" test "$total" -ge "$RUNS"
t_eq "no mixed state after any kill" 0 "$mixed"
t_eq "every run converged to A, or to B after a confirm" 0 "$wrong"
if [ "$total" -lt "$RUNS" ]; then
	cat "$TOPW"/err.*
fi
t_done
