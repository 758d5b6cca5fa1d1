#!/bin/sh
# Guest script (busybox sh, with Debian's mipsel ip, tc and iperf3) for
# tests/net/board-sqm.sh and scripts/bench-sqm: bufferbloat at a modem
# bottleneck, and what shaping on the router's WAN does about it, all
# inside the emulated board, in four network namespaces joined by veth
# pairs:
#
#   lan    eth0 192.168.1.10/24, default via 192.168.1.1
#   rtr    eth0 192.168.1.1/24 (LAN), eth1 198.51.100.2/24 (WAN), default
#          via 198.51.100.1; forwards; no NAT (the modem routes the LAN)
#   modem  eth0 198.51.100.1/24 toward rtr, eth1 203.0.113.254/24 toward
#          wan; the bottleneck: a tbf at MODEM_DOWN on eth0's egress and
#          one at MODEM_UP on eth1's, each with a buffer of SQM_BUFFER_MS
#          at its rate (a bloated DSL or cable modem)
#   wan    eth0 203.0.113.1/24, default via 203.0.113.254; iperf3 servers
#          on ports 5201 (upload) and 5202 (download)
#
# The cases (SQM_CASES), each on rtr's eth1:
#   none     no shaping
#   anchor   /etc/sqm/sqm-anchor.sh (what sqm-scripts' piece_of_cake does,
#            as tc calls): cake egress, cake on ifb4eth1 for ingress
#   nasboot  `nasboot -v apply -c /etc/sqm-rtr.toml` in rtr
#            (tests/profiles/sqm-rtr.toml: [interface.sqm] on eth1)
#   (the shapers' rates, overhead and link layer are the profile's; the
#   anchor is given the same.)
#
# Parameters: /etc/sqm/params (sourced), else the defaults below.
# SQM_MODE:
#   traffic   per case and run: idle RTT (SQM_PINGS pings lan -> wan at
#             SQM_INTERVAL s), then RTT under one upload and one download
#             at once (two iperf3 clients, SQM_SECS s; the pings from 2 s
#             in to 2 s before the end) and the throughput each way
#             (iperf3's receiver side). One line per case:
#             "sqm-result case=C run=R idle_med_ms= idle_p95_ms=
#             load_med_ms= load_p95_ms= up_kbit= down_kbit= load_cpu_pct="
#             With SQM_CHECKS=1, after the nasboot case: a second plan
#             and apply, then the profile without [interface.sqm]
#             applied, then with qdisc = "fq_codel" (HTB), then back to
#             cake ("sqm-check ..." lines).
#   capacity  no modem shaping, no SQM: what the board carries (upload,
#             download, both), "sqm-capacity dir=D kbit=K cpu_pct=P"
#   apply     (meant for QEMU -icount) the apply of each shaping from a
#             clean WAN, SQM_RUNS interleaved rounds with an `empty`
#             variant (the namespace hop alone): "sqm-apply VARIANT RUN
#             MICROSECONDS"; each variant's end state ("sqm-state
#             VARIANT: ..."); then, SQM_CPUMB_RUNS rounds, the board's
#             CPU time for an upload and a download across the modem per
#             case, each of SQM_CPUMB_SMALL_KB and then SQM_CPUMB_UP_KB
#             (SQM_CPUMB_DOWN_KB): "sqm-cpumb case=C run=R dir=D
#             kbytes=K busy_ticks=T kbit=K"
SQM_MODE=traffic
SQM_CASES="none anchor nasboot"
SQM_RUNS=1
SQM_SECS=12
SQM_PINGS=40
SQM_INTERVAL=0.2
MODEM_DOWN=10000
MODEM_UP=5000
SQM_BUFFER_MS=400
SQM_CHECKS=0
SQM_CPUMB_UP_KB=2048
SQM_CPUMB_DOWN_KB=4096
SQM_CPUMB_SMALL_KB=256
SQM_CPUMB_RUNS=''
# shellcheck disable=SC1091
[ ! -f /etc/sqm/params ] || . /etc/sqm/params
[ -n "$SQM_CPUMB_RUNS" ] || SQM_CPUMB_RUNS=$SQM_RUNS
PROFILE=/etc/sqm-rtr.toml
WAN_HOST=203.0.113.1
# The shapers' settings: the profile's [interface.sqm], which the anchor
# is given too.
sqm_key() { awk -v k="$1" '/^\[/ { in_sqm = ($0 == "[interface.sqm]") } in_sqm && $1 == k { v = $3; gsub(/"/, "", v); print v }' "$PROFILE"; }
SHAPED_UP=${SHAPED_UP:-$(sqm_key egress_kbit)}
SHAPED_DOWN=${SHAPED_DOWN:-$(sqm_key ingress_kbit)}
SQM_OVERHEAD=${SQM_OVERHEAD:-$(sqm_key overhead)}
SQM_LINKLAYER=${SQM_LINKLAYER:-$(sqm_key link_layer)}
if [ -z "$SHAPED_UP" ] || [ -z "$SHAPED_DOWN" ]; then
    echo "sqm: FAIL no egress_kbit and ingress_kbit in $PROFILE"
    exit 1
fi
echo "sqm: modem ${MODEM_DOWN}/${MODEM_UP} kbit/s (buffer ${SQM_BUFFER_MS} ms), shaped ${SHAPED_DOWN}/${SHAPED_UP} kbit/s, overhead ${SQM_OVERHEAD:-0} ${SQM_LINKLAYER:-ethernet}"

# Debian's BusyBox sh runs its own applets before PATH: iproute2's ip by
# its path (tc runs under `ip netns exec`, which finds Debian's).
ip() { /bin/ip "$@"; }
fail() {
    echo "sqm: FAIL $*"
    exit 1
}
now() { adjtimex | awk '/tv_sec/ { s = $2 } /tv_usec/ { u = $2 } END { printf "%d%06d\n", s, u }'; }
# busy: the CPU's busy time so far, USER_HZ ticks (user nice system irq softirq).
busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
total() { awk '/^cpu / { s = 0; for (i = 2; i <= NF; i++) s += $i; print s; exit }' /proc/stat; }
# join PREFIX: standard input as one line.
join() { echo "$1 $(tr -s ' \t\n' ' ')"; }
nsx() {
    ns=$1
    shift
    ip netns exec "$ns" "$@"
}

# ---- the namespaces -------------------------------------------------------
mkdir -p /var
[ -e /var/run ] || ln -s /run /var/run
for ns in lan rtr modem wan; do
    ip netns add "$ns" || fail "ip netns add $ns"
    ip -n "$ns" link set lo up
done
ip link add eth0 netns lan type veth peer name eth0 netns rtr || fail "veth lan-rtr"
ip link add eth1 netns rtr type veth peer name eth0 netns modem || fail "veth rtr-modem"
ip link add eth1 netns modem type veth peer name eth0 netns wan || fail "veth modem-wan"
ip -n lan addr add 192.168.1.10/24 dev eth0
ip -n rtr addr add 192.168.1.1/24 dev eth0
ip -n rtr addr add 198.51.100.2/24 dev eth1
ip -n modem addr add 198.51.100.1/24 dev eth0
ip -n modem addr add 203.0.113.254/24 dev eth1
ip -n wan addr add 203.0.113.1/24 dev eth0
for l in lan:eth0 rtr:eth0 rtr:eth1 modem:eth0 modem:eth1 wan:eth0; do
    ip -n "${l%:*}" link set "${l#*:}" up
done
# Wire-sized packets, as NICs on a real router's links carry them: no
# TSO, GSO or GRO on the veths (with them, the hosts' TCP would hand the
# router 64 KB segments, and the CPU per byte would be nothing like a board's).
for l in lan:eth0 rtr:eth0 rtr:eth1 modem:eth0 modem:eth1 wan:eth0; do
    nsx "${l%:*}" ethtool -K "${l#*:}" tso off gso off gro off >/dev/null 2>&1 || fail "ethtool -K on $l"
done
ip -n lan route add default via 192.168.1.1
ip -n rtr route add default via 198.51.100.1
ip -n modem route add 192.168.1.0/24 via 198.51.100.2
ip -n wan route add default via 203.0.113.254
nsx rtr sysctl -qw net.ipv4.ip_forward=1
nsx modem sysctl -qw net.ipv4.ip_forward=1
nsx lan ping -c 1 -W 5 "$WAN_HOST" >/dev/null || fail "no route from lan to the wan host"

# modem_shape on|off: the modem's bottleneck, both ways.
modem_shape() {
    for d in eth0:$MODEM_DOWN eth1:$MODEM_UP; do
        nsx modem tc qdisc del dev "${d%:*}" root 2>/dev/null
        [ "$1" = on ] || continue
        # A buffer of SQM_BUFFER_MS at the rate, in bytes.
        limit=$((${d#*:} * SQM_BUFFER_MS / 8))
        nsx modem tc qdisc add dev "${d%:*}" root tbf rate "${d#*:}kbit" burst 4000 limit "$limit" ||
            fail "modem tbf on ${d%:*}"
    done
}

# shape CASE: the router's WAN as the case has it, from a clean WAN.
unshape() { nsx rtr env TC=/sbin/tc IP=/bin/ip sh /etc/sqm/sqm-anchor.sh stop; }
shape() {
    case $1 in
        none) : ;;
        anchor) nsx rtr env TC=/sbin/tc IP=/bin/ip IFACE=eth1 UP="$SHAPED_UP" DOWN="$SHAPED_DOWN" OVERHEAD="$SQM_OVERHEAD" \
            LINKLAYER="$SQM_LINKLAYER" sh /etc/sqm/sqm-anchor.sh ;;
        nasboot) nsx rtr nasboot -v apply -c "$PROFILE" ;;
        empty) nsx rtr true ;;
        *) echo "unknown case $1"; return 1 ;;
    esac
}

# The end state of the WAN's shaping, handles and counters left out.
wan_state() {
    {
        nsx rtr tc qdisc show dev eth1
        nsx rtr tc qdisc show dev ifb4eth1 2>/dev/null
        nsx rtr tc filter show dev eth1 parent ffff: 2>/dev/null | grep -E 'mirred|match'
        nsx rtr ip -o link show ifb4eth1 2>/dev/null | sed 's/^[0-9]*: //; s/ link\/ether.*//'
    } | sed -E 's/ [0-9a-f]+: (root|dev|parent)/ \1/; s/qdisc ([a-z_]+) [0-9a-f]+:/qdisc \1/; s/ refcnt [0-9]+//; s/ *$//' |
        tr -s ' ' | grep . | sed "s/^/sqm-state $1: /"
}

# rotate N WORDS...: the words, starting from the Nth (0-based, wrapping):
# each round takes the cases in a different order.
rotate() {
    n=$1
    shift
    i=0
    for w in "$@"; do [ "$i" -lt $((n % $#)) ] || printf '%s ' "$w"; i=$((i + 1)); done
    i=0
    for w in "$@"; do [ "$i" -ge $((n % $#)) ] || printf '%s ' "$w"; i=$((i + 1)); done
}

# stats NAME: median and p95 (nearest rank) of the RTTs in /tmp/NAME.rtt.
stats() {
    sort -n "/tmp/$1.rtt" | awk -v n="$1" '{ a[NR] = $1 } END {
        if (NR == 0) { printf "%s_med_ms=none %s_p95_ms=none %s_n=0", n, n, n; exit }
        m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
        k = int(NR * 0.95); if (k < NR * 0.95) k++
        printf "%s_med_ms=%.2f %s_p95_ms=%.2f %s_n=%d", n, m, n, a[k], n, NR }'
}
# pings NAME COUNT: ping the wan host from the lan host; RTTs in /tmp/NAME.rtt.
pings() {
    nsx lan ping -c "$2" -i "$SQM_INTERVAL" -W 2 "$WAN_HOST" >"/tmp/$1.ping" 2>&1
    sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "/tmp/$1.ping" >"/tmp/$1.rtt"
}
# kbit FILE: iperf3's receiver rate from its summary (-f k).
kbit() { awk '/receiver/ { for (i = 1; i <= NF; i++) if ($i == "Kbits/sec") r = $(i - 1) } END { print r + 0 }' "$1"; }

# servers: the two iperf3 servers on the wan host, (re)started.
servers() {
    killall iperf3 2>/dev/null && sleep 1
    nsx wan iperf3 -s -D -p 5201 || fail "iperf3 server"
    nsx wan iperf3 -s -D -p 5202 || fail "iperf3 server"
    sleep 1
}
servers
# iperf3 CLIENT-ARGS...: a client that has not ended 30 s after its test
# should have is stuck in the results exchange at the test's end (an
# iperf3 bug, seen once in about ten runs): it is killed, and fails.
iperf3c() { nsx lan timeout "$((SQM_SECS + 30))" iperf3 -c "$WAN_HOST" "$@"; }

# load SECS [PINGS]: one upload and one download at once from the lan host,
# with PINGS pings while they run; /tmp/up.out, /tmp/down.out, /tmp/load.rtt.
load() {
    load_ok=1
    iperf3c -p 5201 -t "$1" -f k -i 0 >/tmp/up.out 2>&1 &
    up_pid=$!
    iperf3c -p 5202 -t "$1" -f k -i 0 -R >/tmp/down.out 2>&1 &
    down_pid=$!
    sleep 2
    b0=$(busy) a0=$(total)
    if [ -n "${2:-}" ]; then pings load "$2"; else sleep $(($1 - 4)); fi
    b1=$(busy) a1=$(total)
    wait "$up_pid" || { load_ok=0; echo "sqm: iperf3 upload failed: $(tr '\n' ' ' </tmp/up.out)"; }
    wait "$down_pid" || { load_ok=0; echo "sqm: iperf3 download failed: $(tr '\n' ' ' </tmp/down.out)"; }
    cpu=$(((b1 - b0) * 100 / (a1 - a0 + 1)))
}

# ---- capacity ---------------------------------------------------------------
if [ "$SQM_MODE" = capacity ]; then
    modem_shape off
    for dir in up down both; do
        b0=$(busy) a0=$(total)
        case $dir in
            up) iperf3c -p 5201 -t "$SQM_SECS" -f k -i 0 >/tmp/up.out 2>&1 ;;
            down) iperf3c -p 5202 -t "$SQM_SECS" -f k -i 0 -R >/tmp/down.out 2>&1 ;;
            both) load "$SQM_SECS" ;;
        esac
        b1=$(busy) a1=$(total)
        [ "$dir" = both ] || cpu=$(((b1 - b0) * 100 / (a1 - a0 + 1)))
        case $dir in
            up) echo "sqm-capacity dir=up kbit=$(kbit /tmp/up.out) cpu_pct=$cpu" ;;
            down) echo "sqm-capacity dir=down kbit=$(kbit /tmp/down.out) cpu_pct=$cpu" ;;
            both) echo "sqm-capacity dir=both up_kbit=$(kbit /tmp/up.out) down_kbit=$(kbit /tmp/down.out) cpu_pct=$cpu" ;;
        esac
    done
    pings idle 20
    echo "sqm-capacity idle $(stats idle)"
    exit 0
fi

modem_shape on
echo "sqm: modem $(nsx modem tc qdisc show | tr '\n' ' ')"

# ---- apply time and CPU per MB (under -icount) ----------------------------
if [ "$SQM_MODE" = apply ]; then
    # Untimed: each variant once (the kernel's first use of each module).
    for v in anchor nasboot empty; do
        unshape
        shape "$v" >/tmp/out 2>&1 || fail "$v (untimed): $(tr '\n' ' ' </tmp/out)"
        sed "s/^/sqm: $v untimed: /" /tmp/out
    done
    r=1
    while [ "$r" -le "$SQM_RUNS" ]; do
        for v in $(rotate $((r - 1)) anchor nasboot empty); do
            unshape
            t0=$(now)
            shape "$v" >/tmp/out 2>&1 || fail "$v: $(tr '\n' ' ' </tmp/out)"
            t1=$(now)
            echo "sqm-apply $v $r $((t1 - t0))"
            [ "$r" != "$SQM_RUNS" ] || [ "$v" = empty ] || wan_state "$v"
        done
        r=$((r + 1))
    done
    r=1
    while [ "$r" -le "$SQM_CPUMB_RUNS" ]; do
        # shellcheck disable=SC2086 # the list, split on purpose
        for c in $(rotate $((r - 1)) $SQM_CASES); do
            unshape
            shape "$c" >/tmp/out 2>&1 || fail "$c: $(tr '\n' ' ' </tmp/out)"
            for dir in up down; do
                if [ "$dir" = up ]; then big=$SQM_CPUMB_UP_KB R=''; else big=$SQM_CPUMB_DOWN_KB R=-R; fi
                port=5201
                [ "$dir" = up ] || port=5202
                # A small transfer, then the big one: the difference leaves
                # out what does not grow with the bytes (the namespace hop,
                # iperf3's start and its control exchange, slow start).
                for kb in "$SQM_CPUMB_SMALL_KB" "$big"; do
                    b0=$(busy)
                    # shellcheck disable=SC2086 # R is empty or -R
                    iperf3c -p "$port" -n "${kb}K" -f k -i 0 $R >/tmp/cpumb.out 2>&1 ||
                        fail "$c $dir: $(tr '\n' ' ' </tmp/cpumb.out)"
                    b1=$(busy)
                    echo "sqm-cpumb case=$c run=$r dir=$dir kbytes=$kb busy_ticks=$((b1 - b0)) kbit=$(kbit /tmp/cpumb.out)"
                done
            done
        done
        r=$((r + 1))
    done
    unshape
    exit 0
fi

# ---- traffic ----------------------------------------------------------------
checks() {
    nsx rtr nasboot plan -c "$PROFILE" 2>&1 | join "sqm-check plan-again:"
    nsx rtr nasboot apply -c "$PROFILE" >/tmp/out 2>&1
    echo "sqm-check apply-again-exit=$?"
    join "sqm-check apply-again:" </tmp/out
    awk '/^\[interface\.sqm\]/ { skip = 1; next } /^\[/ { skip = 0 } !skip' "$PROFILE" >/tmp/nosqm.toml
    nsx rtr nasboot -v apply -c /tmp/nosqm.toml >/tmp/out 2>&1
    echo "sqm-check remove-exit=$?"
    join "sqm-check remove:" </tmp/out
    nsx rtr tc qdisc show dev eth1 | join "sqm-check remove-qdisc:"
    nsx rtr tc qdisc show dev eth1 ingress | join "sqm-check remove-ingress:"
    if nsx rtr ip link show ifb4eth1 >/dev/null 2>&1; then
        echo "sqm-check remove-ifb=present"
    else
        echo "sqm-check remove-ifb=absent"
    fi
    nsx rtr nasboot plan -c /tmp/nosqm.toml 2>&1 | join "sqm-check remove-plan-again:"
    # fq_codel under HTB (what qdisc = "auto" takes on a kernel without
    # sch_cake), named in the profile; then back to cake in one apply
    # (another kind under nasboot's handle: deleted, then made).
    sed 's/^qdisc = .*/qdisc = "fq_codel"/' "$PROFILE" >/tmp/fq.toml
    nsx rtr nasboot -v apply -c /tmp/fq.toml >/tmp/out 2>&1
    echo "sqm-check fq-exit=$?"
    join "sqm-check fq-apply:" </tmp/out
    for d in eth1 ifb4eth1; do
        nsx rtr tc qdisc show dev "$d" | join "sqm-check fq-qdisc $d:"
        nsx rtr tc class show dev "$d" | join "sqm-check fq-class $d:"
    done
    nsx rtr tc filter show dev eth1 ingress | join "sqm-check fq-filter:"
    nsx rtr nasboot plan -c /tmp/fq.toml 2>&1 | join "sqm-check fq-plan-again:"
    nsx rtr nasboot -v apply -c "$PROFILE" >/tmp/out 2>&1
    echo "sqm-check cake-again-exit=$?"
    for d in eth1 ifb4eth1; do
        nsx rtr tc qdisc show dev "$d" | join "sqm-check cake-again-qdisc $d:"
    done
    nsx rtr nasboot plan -c "$PROFILE" 2>&1 | join "sqm-check cake-again-plan:"
}

r=1
while [ "$r" -le "$SQM_RUNS" ]; do
    # shellcheck disable=SC2086 # the list, split on purpose
    for c in $(rotate $((r - 1)) $SQM_CASES); do
        unshape
        t0=$(now)
        shape "$c" >/tmp/out 2>&1 || fail "$c: $(tr '\n' ' ' </tmp/out)"
        t1=$(now)
        sed "s/^/sqm: $c $r apply: /" /tmp/out
        # A case whose iperf3 client stalled is measured once more, with
        # the servers restarted; a second stall leaves its result empty.
        try=1
        while :; do
            b0=$(busy) a0=$(total)
            pings idle "$SQM_PINGS"
            b1=$(busy) a1=$(total)
            idle_cpu=$(((b1 - b0) * 100 / (a1 - a0 + 1)))
            load "$SQM_SECS" "$(awk -v s="$SQM_SECS" -v i="$SQM_INTERVAL" 'BEGIN { print int((s - 4) / i) }')"
            if [ "$load_ok" = 1 ] || [ "$try" = 2 ]; then break; fi
            echo "sqm: $c $r: an iperf3 client stalled; servers restarted, the case measured again"
            servers
            try=2
        done
        echo "sqm-result case=$c run=$r $(stats idle) $(stats load) up_kbit=$(kbit /tmp/up.out) down_kbit=$(kbit /tmp/down.out) idle_cpu_pct=$idle_cpu load_cpu_pct=$cpu apply_wall_us=$((t1 - t0))"
        if [ "$r" = "$SQM_RUNS" ]; then
            nsx rtr tc -s qdisc show | sed "s/^/sqm: $c tc: /"
            nsx modem tc -s qdisc show | sed "s/^/sqm: $c modem tc: /"
            wan_state "$c"
        fi
        if [ "$c" = nasboot ] && [ "$r" = "$SQM_RUNS" ]; then
            nsx rtr nasboot status -c "$PROFILE" 2>&1 | sed "s/^/sqm: nasboot status: /"
            [ "$SQM_CHECKS" != 1 ] || checks
        fi
    done
    r=$((r + 1))
done
unshape
exit 0
