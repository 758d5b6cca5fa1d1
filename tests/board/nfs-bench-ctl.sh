#!/bin/sh
# Guest control handler for scripts/bench-nfs (busybox sh, run by
# `nc -l -p 7000 -e`): reads one command from the host, puts the board's
# firewall into that configuration from a clean slate, and answers
# "ready CONFIG conntrack=yes|no".
#   none       no rules, netfilter modules unloaded (the seed's "iptables
#              and conntrack gone")
#   bubba      the Bubba 2's shipped rules (/etc/bench/bubba2-firewall.conf),
#              iptables-legacy-restore, as on the board
#   stateless  nasboot firewall apply, the profile (stateless, nftables,
#              the default hook = "auto"); the answer says which hook it
#              took ("hook=ingress" or "hook=input")
#   stateless-input  the same with hook = "input" (/etc/bench/input.toml)
#   stateless-ipt  the same rule model through iptables-restore (legacy)
#   stateful   nasboot firewall apply with the stateful variant
#   stat       answer "stat BUSY TOTAL": the CPU's busy and total time so
#              far, in USER_HZ ticks (/proc/stat)
#   stop       end the benchmark
read -r cmd
clean() {
    nft flush ruleset 2>/dev/null
    for t in filter nat; do
        iptables -t "$t" -F 2>/dev/null
        iptables -t "$t" -X 2>/dev/null
    done
    # Unload until nothing more goes (dependents first, whatever the order).
    for pass in 1 2 3 4 5 6; do
        for m in $(lsmod | awk 'NR > 1 && /^(ip|xt|nf|nft|iptable|ipt)_/ { print $1 }'); do
            rmmod "$m" 2>/dev/null
        done
    done
    : "$pass"
}
case $cmd in
    none) clean ;;
    bubba) clean && iptables-restore </etc/bench/bubba2-firewall.conf ;;
    stateless) clean && nasboot -q firewall apply ;;
    stateless-input) clean && nasboot -q -c /etc/bench/input.toml firewall apply ;;
    stateless-ipt) clean && nasboot -q --backend iptables firewall apply ;;
    stateful) clean && nasboot -q -c /etc/bench/stateful.toml firewall apply ;;
    stat)
        read -r _ us ni sy id io hi si _ </proc/stat
        echo "stat $((us + ni + sy + hi + si)) $((us + ni + sy + id + io + hi + si))"
        exit 0
        ;;
    stop) : >/tmp/bench-stop ;;
    *) echo "error unknown command '$cmd'"; exit 0 ;;
esac
rc=$?
ct=no
[ -e /proc/sys/net/netfilter/nf_conntrack_count ] && ct=yes
hook=
if [ "$cmd" = stateless ]; then
    hook="hook=input "
    nft list ruleset | grep -q 'hook ingress' && hook="hook=ingress "
fi
if [ "$rc" = 0 ]; then echo "ready $cmd ${hook}conntrack=$ct"; else echo "error $cmd exit $rc"; fi
