#!/bin/sh
# Guest script for scripts/bench-fwload (busybox sh): loading the firewall
# on the emulated board, each variant from the same reset state (no rules:
# `nft flush ruleset` where the board has nft, then `nasboot firewall
# apply` of /etc/bench/off.toml, through netlink), in
# RUNS (the kernel command line's bench.runs=) interleaved rounds. The
# variants, one a line in /etc/bench/variants:
#   native-P   nasboot firewall apply of /etc/bench/P.toml, through netlink
#   tool-P     the same with --loader nft: one `nft -f -`
#   before-P   /usr/sbin/nasboot-before (another build, when given)
#              firewall apply
#   ipt-P      nasboot --backend iptables: iptables-restore and
#              ip6tables-restore, each --test then for real
#   fw4        nft -f /etc/bench/fw4-default.nft (OpenWrt's default rules)
#   version    nasboot --version (its start alone)
#   check-P    nasboot check (start, the profile read and validated)
#   render-P   nasboot firewall render (the same, the board observed, the
#              rule set planned and printed: all but the load)
#   empty      the shell's `:` (the clock's and the counter's own cost)
# for P in router and stateless. Per run: "bench: VARIANT RUN MICROSECONDS
# PROCESSES" (guest clock, the kernel's fork count). After the last round,
# each nasboot variant's end state ("VARIANT state: ..."): the kernel's
# rule set as nasboot status and the tables' listing (`nft list ruleset`
# where the board has nft) show it, which the host compares across the
# variants of one profile. Every variant runs once untimed first, so that
# the modules it needs are loaded before the timed rounds.
# With bench.cold=1 (bench-fwload --cold) every reset then unloads every
# netfilter module, so that each variant loads on a kernel that has none
# loaded, as the first load after power-on does.
RUNS=$(sed -n 's/.*bench.runs=\([0-9]*\).*/\1/p' /proc/cmdline)
COLD=$(sed -n 's/.*bench.cold=\([0-9]*\).*/\1/p' /proc/cmdline)
VARIANTS=$(cat /etc/bench/variants)
now() { adjtimex | awk '/tv_sec/ { s = $2 } /tv_usec/ { u = $2 } END { printf "%d%06d\n", s, u }'; }
forks() { sed -n 's/^processes //p' /proc/stat; }
# unload: every netfilter module (tests/board/nf-unload.sh).
unload() {
    sh /etc/bench/nf-unload
    if grep -q '^nf_tables ' /proc/modules; then echo "bench: cold: nf_tables is still loaded: $(cut -d' ' -f1,3,4 /proc/modules | tr '\n' ' ')"; exit 1; fi
}
reset() {
    # fw4's table too, where the board has nft (nasboot's goes with off).
    if command -v nft >/dev/null; then nft flush ruleset; fi
    nasboot -q -c /etc/bench/off.toml firewall apply >/tmp/out 2>&1 || { echo "bench: reset failed: $(cat /tmp/out)"; exit 1; }
    nasboot -q -c /etc/bench/off.toml --backend iptables firewall apply >/tmp/out 2>&1 || { echo "bench: reset (iptables) failed: $(cat /tmp/out)"; exit 1; }
    [ "${COLD:-0}" = 0 ] || unload
}
run() {
    case $1 in
        native-*) nasboot -q -c "/etc/bench/${1#native-}.toml" firewall apply ;;
        tool-*) nasboot -q -c "/etc/bench/${1#tool-}.toml" --loader nft firewall apply ;;
        before-*) nasboot-before -q -c "/etc/bench/${1#before-}.toml" firewall apply ;;
        ipt-*) nasboot -q -c "/etc/bench/${1#ipt-}.toml" --backend iptables firewall apply ;;
        fw4) nft -f /etc/bench/fw4-default.nft ;;
        version) nasboot --version ;;
        check-*) nasboot -q -c "/etc/bench/${1#check-}.toml" check ;;
        render-*) nasboot -q -c "/etc/bench/${1#render-}.toml" firewall render ;;
        empty) : ;;
    esac
}
# The status line without the clause only a netlink load earns (the seal
# in nasboot's table says it loaded the rules and nothing touched them
# since: src/firewall/mod.rs, "Loading"); the tool path loads no seal.
state() {
    nasboot -c "/etc/bench/$2.toml" status 2>&1 | sed -n 's/^ *firewall: /status: /p' | sed "s/, this profile's, unchanged since nasboot loaded them//; s/^/$1 state: /"
    if command -v nft >/dev/null; then nft list ruleset | sed "s/^/$1 state: /"; fi
    if [ "${1%%-*}" = ipt ]; then iptables-save | grep '^-A' | sed "s/^/$1 state: /"; fi
}
for v in $VARIANTS; do
    reset
    run "$v" >/tmp/out 2>&1 || { echo "bench: $v (untimed) failed: $(cat /tmp/out)"; exit 1; }
done
r=1
while [ "$r" -le "$RUNS" ]; do
    for v in $VARIANTS; do
        reset
        f0=$(forks)
        t0=$(now)
        run "$v" >/tmp/out 2>&1 || { echo "bench: $v failed: $(cat /tmp/out)"; exit 1; }
        t1=$(now)
        f1=$(forks)
        echo "bench: $v $r $((t1 - t0)) $((f1 - f0))"
        if [ "$r" = "$RUNS" ]; then
            case $v in native-* | tool-* | before-* | ipt-*) state "$v" "${v#*-}" ;; esac
        fi
    done
    r=$((r + 1))
done
# With bench.cold=1, each module the two rule sets need (and what they
# depend on), loaded alone in dependency order from a kernel with none
# loaded: "bench-module: NAME MICROSECONDS" for `modprobe NAME` (BusyBox's,
# the board's kernel.modprobe, the one the kernel runs for its own
# requests), and for "modprobe-loaded" the same of a module already
# there: the process alone.
if [ "${COLD:-0}" = 1 ]; then
    reset
    for m in crc32c_generic libcrc32c nfnetlink nf_tables nft_limit nft_log nf_log_syslog nf_defrag_ipv4 nf_defrag_ipv6 \
        nf_conntrack nft_ct nft_fib nft_fib_ipv4 nft_fib_ipv6 nft_fib_inet nf_nat nft_masq nft_nat nft_chain_nat nf_flow_table \
        nf_flow_table_inet nft_flow_offload; do
        ! grep -q "^$m " /proc/modules || { echo "bench: cold: $m is loaded before its turn"; exit 1; }
        t0=$(now)
        modprobe "$m" || { echo "bench: modprobe $m failed"; exit 1; }
        t1=$(now)
        echo "bench-module: $m $((t1 - t0))"
    done
    t0=$(now)
    modprobe nf_tables
    t1=$(now)
    echo "bench-module: modprobe-loaded $((t1 - t0))"
fi
