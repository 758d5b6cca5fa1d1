#!/bin/sh
# Guest script for scripts/bench-net-board (busybox sh): the Bubba 2-like
# network bring-up on the board's two e1000s, `nasboot apply` against the
# anchor script (scripts/bench-net.anchor.sh) twice: `anchor` with BusyBox
# sh, ip and sysctl, `debian` with Debian's dash, iproute2 ip and procps
# sysctl (dynamically linked, as on a Debian board such as the Bubba 2);
# both with Debian's ethtool. RUNS interleaved runs each from the same
# reset state. Debian's ip and sysctl come first on PATH, but BusyBox sh
# (Debian's busybox-static is built to prefer its own applets) runs its
# own ip and sysctl for the `anchor` variant, as on a BusyBox-only board.
# Per run it prints "bench: VARIANT RUN MICROSECONDS PROCESSES USER_MS
# SYS_MS", where PROCESSES is the kernel's fork count (/proc/stat
# "processes") over the run and USER_MS and SYS_MS the CPU time of the
# shell's children over it (the shell's `times`: tick-granular, so only
# medians mean anything); the `empty` variant (the shell's `:`) measures
# what the clock and the counter themselves cost, for the host to
# subtract. The `settled` variant times a second `nasboot apply` after an
# untimed first one: the same start, profile and observation with nothing
# left to change, so that nasboot minus settled is what the changes
# themselves cost, the kernel's work included, which any tool pays. After
# the last run of each variant it prints that variant's end state.
#
# On a built big-endian board (scripts/bench-net-board --board NAME) there
# is no Debian user space: the kernel command line's bench.debian=0 drops
# the `debian` variant, and ethtool is the board's static build
# (/usr/sbin/ethtool, from Debian's source) for both sides.
RUNS=$(sed -n 's/.*bench.runs=\([0-9]*\).*/\1/p' /proc/cmdline)
VARIANTS="nasboot anchor debian settled empty"
if grep -q 'bench.debian=0' /proc/cmdline; then VARIANTS="nasboot anchor settled empty"; fi
export ETHTOOL=ethtool
# The anchors must really run the tools they are named after.
if [ "$(busybox sh -c 'ip --help 2>&1; sysctl --help 2>&1' | grep -c '^BusyBox v')" != 2 ]; then
    echo "bench: BusyBox sh does not run its own ip and sysctl applets"
    exit 1
fi
case $VARIANTS in
    *debian*)
        case $(/bin/ip -V; /sbin/sysctl -V) in
            *iproute2*procps*) ;;
            *) echo "bench: /bin/ip and /sbin/sysctl are not Debian's iproute2 and procps"; exit 1 ;;
        esac
        ;;
esac
case $(ethtool --version) in
    'ethtool version'*) ;;
    *) echo "bench: ethtool is not ethtool"; exit 1 ;;
esac
mac0=$(cat /sys/class/net/eth0/address)
mac1=$(cat /sys/class/net/eth1/address)

# The e1000 and kernel defaults, as after a boot.
reset() {
    for i in eth0 eth1; do
        ip link set dev "$i" down
        ip addr flush dev "$i"
        ip link set dev "$i" mtu 1500 qlen 1000
        ethtool -K "$i" tso on gro on
        sysctl -q -w "net.ipv6.conf.$i.accept_ra=1" "net.ipv4.conf.$i.rp_filter=0"
    done
    ip link set dev eth0 address "$mac0"
    ip link set dev eth1 address "$mac1"
    ip route flush table main
    sysctl -q -w net.ipv4.ip_forward=0
}
now() { adjtimex | awk '/tv_sec/ { s = $2 } /tv_usec/ { u = $2 } END { printf "%d%06d\n", s, u }'; }
forks() { sed -n 's/^processes //p' /proc/stat; }
# The children's user and system CPU time so far, in ms ("0m0.490s 0m0.010s"
# is the second line of `times`), into /tmp/cpu: `times` runs in this shell
# (in a subshell it would count only the subshell's own children).
cpu() {
    times >/tmp/times
    awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%d %d\n", (u[1] * 60 + u[2]) * 1000, (s[1] * 60 + s[2]) * 1000 }' /tmp/times >/tmp/cpu
}
state() {
    for i in eth0 eth1; do
        echo "state: $i $(cat /sys/class/net/$i/mtu) $(cat /sys/class/net/$i/tx_queue_len) $(cat /sys/class/net/$i/address) $(cat /sys/class/net/$i/flags)"
        echo "state: $i $(ip addr show dev "$i" | awk '/inet/ && /global/ { print $2 }' | sort | tr '\n' ' ')"
        echo "state: $i $(ethtool -k "$i" | grep -E '^(tcp-segmentation-offload|generic-receive-offload):' | tr -s ' \n' ' ')"
        echo "state: $i accept_ra=$(cat /proc/sys/net/ipv6/conf/$i/accept_ra) rp_filter=$(cat /proc/sys/net/ipv4/conf/$i/rp_filter)"
    done
    echo "state: routes $(ip route show | sort | tr -s ' \n' ' ')"
    echo "state: ip_forward=$(cat /proc/sys/net/ipv4/ip_forward)"
}
run() {
    case $1 in
        nasboot | settled) nasboot -q apply ;;
        anchor) IP=ip SYSCTL="sysctl -q" busybox sh /etc/bench/anchor.sh ;;
        debian) IP=/bin/ip SYSCTL="/sbin/sysctl -q" /bin/dash /etc/bench/anchor.sh ;;
        empty) : ;;
    esac
}
r=1
while [ "$r" -le "$RUNS" ]; do
    for v in $VARIANTS; do
        reset
        if [ "$v" = settled ]; then nasboot -q apply >/tmp/out 2>&1 || { echo "bench: settled's first apply failed: $(cat /tmp/out)"; exit 1; }; fi
        cpu
        read -r u0 s0 </tmp/cpu
        f0=$(forks)
        t0=$(now)
        run "$v" >/tmp/out 2>&1 || { echo "bench: $v failed: $(cat /tmp/out)"; exit 1; }
        t1=$(now)
        f1=$(forks)
        cpu
        read -r u1 s1 </tmp/cpu
        echo "bench: $v $r $((t1 - t0)) $((f1 - f0)) $((u1 - u0)) $((s1 - s0))"
        if [ "$v" = settled ] && [ "$r" = 1 ]; then
            nasboot status >/tmp/out 2>&1 || true
            if ! grep -q '^in sync with the profile' /tmp/out; then
                echo "bench: settled: the board is not in sync after the first apply: $(cat /tmp/out)"
                exit 1
            fi
        fi
        if [ "$r" = "$RUNS" ] && [ "$v" != empty ]; then state | sed "s/^/$v /"; fi
    done
    r=$((r + 1))
done
