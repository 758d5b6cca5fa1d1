#!/bin/sh
# Guest script for scripts/bench-boot (busybox sh): the whole boot job on
# the emulated board, each variant from the same reset state, in RUNS (the
# kernel command line's bench.runs=) interleaved rounds. The variants, one
# a line in /etc/bench/variants:
#   nasboot-nas     `nasboot run --background` of /etc/bench/nas.toml
#                   (board/bubba2.toml), as the init scripts start it,
#                   timed until it returns: the links, addresses, sysctls,
#                   read-ahead, firewall, exports and watchdog all in force
#   debian-nas      /etc/bench/debian-nas.sh: what a Debian Bubba 2's boot
#                   runs for the same (ifupdown's ip calls, sysctl -p,
#                   iptables-restore of the Bubba's rules, exportfs -ra,
#                   the watchdog daemon), timed until the watchdog is armed
#   nasboot-router  the same for /etc/bench/router.toml
#                   (board/wndr3700-router.toml)
#   openwrt-router  /etc/bench/openwrt-router.sh: BusyBox ip for the VLAN,
#                   the bridge and the addresses, nft -f of fw4's rule set,
#                   BusyBox watchdog
#   busybox-nas, busybox-router
#                   on a big-endian board (BusyBox only, no Debian user
#                   space, no nft): /etc/bench/busybox-*.sh, BusyBox's
#                   applets and the board's iptables-restore
#   empty           the shell's `:` (the clock's and the counter's own cost)
# Per run: "bench: VARIANT RUN MICROSECONDS PROCESSES" (guest clock, the
# kernel's fork count). After the last round, each variant's end state
# ("VARIANT state: ..."), which the host compares between the two sides of
# one profile. Every variant runs once untimed first: the kernel modules
# each side asks for are loaded there ("VARIANT modules: N" counts them).
RUNS=$(sed -n 's/.*bench.runs=\([0-9]*\).*/\1/p' /proc/cmdline)
VARIANTS=$(cat /etc/bench/variants)
WDT=/sys/class/watchdog/watchdog0
now() { adjtimex | awk '/tv_sec/ { s = $2 } /tv_usec/ { u = $2 } END { printf "%d%06d\n", s, u }'; }
forks() { sed -n 's/^processes //p' /proc/stat; }
fail() {
    echo "bench: $*"
    [ ! -e /tmp/syslog ] || sed 's/^/syslog: /' /tmp/syslog
    exit 1
}

# The user space both sides share, set up once: the iptables package's
# alternatives (legacy, as on the Bubba's 2.6 kernel), nfsd with rpcbind
# and mountd running (their start is neither side's work), the export's
# directory, the boot values of every sysctl either side sets.
if [ -e /usr/sbin/xtables-legacy-multi ]; then
    for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
        ln -sf xtables-legacy-multi "/usr/sbin/$t"
    done
fi
printf 'root:x:0:0:root:/root:/bin/sh\n_rpc:x:100:65534::/run/rpcbind:/bin/false\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >/etc/passwd
printf 'root:x:0:\nnogroup:x:65534:\n' >/etc/group
# Debian's /var/run (the watchdog daemon's pidfile).
[ -e /var/run ] || ln -s /run /var/run
mkdir -p /var/lib/nfs/rpc_pipefs /run/rpcbind /etc/nfs.conf.d /etc/default /home/storage /run/nasboot
: >/var/lib/nfs/etab
: >/var/lib/nfs/rmtab
# The big-endian boards have no nfs-utils (their profile has no exports).
NFS=0
if command -v rpc.nfsd >/dev/null; then
    NFS=1
    mount -t nfsd nfsd /proc/fs/nfsd || fail "mount nfsd failed"
    rpcbind -w || fail "rpcbind failed"
    rpc.nfsd 8 || fail "rpc.nfsd failed"
    rpc.mountd --manage-gids || fail "rpc.mountd failed"
fi
# The BusyBox router's rule set: the router profile's, as nasboot renders
# it for iptables-restore (IPv4, then IPv6).
if [ -e /etc/bench/busybox-router.sh ]; then
    nasboot -c /etc/bench/router.toml --backend iptables firewall render >/tmp/router.rules || fail "firewall render failed"
    awk '/^# nasboot firewall: .*IPv6/ { v6 = 1 } { print > (v6 ? "/etc/bench/router.v6" : "/etc/bench/router.v4") }' /tmp/router.rules
fi
SYSCTLS=$(cat /etc/bench/sysctls)
for k in $SYSCTLS net.ipv4.ip_local_port_range; do
    printf '%s=%s\n' "$k" "$(sysctl -n "$k")"
done >/tmp/sysctl.boot
RA_BOOT=$(cat /sys/block/sda/queue/read_ahead_kb)
mkfifo /tmp/tick.fifo
# BusyBox's applets by their names, for the OpenWrt-class path.
mkdir -p /opt/busybox
for a in ip sysctl udhcpc watchdog; do ln -s /bin/busybox "/opt/busybox/$a"; done
# The daemons' syslog (Debian's watchdog logs nowhere else).
syslogd -O /tmp/syslog

# stop NAME...: SIGTERM (the watchdog daemons write the magic close), and
# wait until each has gone.
stop() {
    for n in "$@"; do
        for p in $(pidof "$n"); do
            kill -TERM "$p" 2>/dev/null
            while kill -0 "$p" 2>/dev/null; do usleep 2000; done
        done
    done
}
# reset VARIANT: the state every variant starts from.
reset() {
    stop nasboot watchdog udhcpc
    [ "$(cat $WDT/state)" = inactive ] || fail "reset: the watchdog is still $(cat $WDT/state)"
    for l in br-lan eth0.1; do ip link del "$l" 2>/dev/null; done
    for l in eth0 eth1; do
        ip addr flush dev "$l"
        ip link set "$l" down mtu 1500
        ifconfig "$l" txqueuelen 1000
    done
    sysctl -q -p /tmp/sysctl.boot >/dev/null
    echo "$RA_BOOT" >/sys/block/sda/queue/read_ahead_kb
    # nasboot's tables through netlink where the board has no nft.
    if command -v nft >/dev/null; then
        nft flush ruleset
    else
        nasboot -q -c /etc/bench/off.toml firewall apply >/tmp/out 2>&1 || fail "reset: firewall off failed: $(cat /tmp/out)"
    fi
    for t in iptables ip6tables; do
        for tb in filter nat raw mangle; do "$t" -t "$tb" -F 2>/dev/null; "$t" -t "$tb" -X 2>/dev/null; done
        for c in INPUT FORWARD OUTPUT; do "$t" -P "$c" ACCEPT; done
    done
    [ "$NFS" = 0 ] || exportfs -ua
    # nasboot writes the export table and runs exportfs -ra, as at a first
    # boot; the Debian side's table is its own, in place.
    rm -f /etc/exports /etc/exports.bak /run/nasboot/firewall.*
    [ "$1" != debian-nas ] || cp /etc/bench/debian-exports /etc/exports
}
# armed: wait until the watchdog is armed, polling every 2 ms without a
# process (a read with a timeout on a FIFO nobody writes), for 10 s at most.
armed() {
    i=0
    while :; do
        read -r s <$WDT/state
        [ "$s" = active ] && return 0
        i=$((i + 1))
        [ "$i" -lt 5000 ] || return 1
        # shellcheck disable=SC3045 # BusyBox ash's read takes -t
        read -r -t 0.002 _ <>/tmp/tick.fifo
    done
}
# nasboot_run PROFILE: `nasboot run --background`, as the init scripts
# start it (board/init/debian/nasboot: no -v unless NASBOOT_OPTS asks):
# it returns once the apply is in force (the links, addresses, sysctls,
# read-ahead, firewall, exports and watchdog), the watchdog daemon going
# on in a child. The untimed pass runs it with -v and shows its output,
# for the log, as the anchors' untimed pass runs their scripts with -x.
nasboot_run() {
    nasboot ${TRACE:+-v} -c "/etc/bench/$1.toml" run --background --pidfile /run/nasboot.pid >/tmp/run.out 2>&1 || return 1
    [ -z "$TRACE" ] || sed "s/^/$1: /" /tmp/run.out >/dev/console
}
run() {
    case $1 in
        nasboot-*) nasboot_run "${1#nasboot-}" ;;
        debian-nas | openwrt-router | busybox-*)
            sh $TRACE "/etc/bench/$1.sh" || return 1
            armed || { echo "the watchdog was not armed within 10 s"; return 1; }
            ;;
        empty) : ;;
    esac
}
# state VARIANT: what both sides of one profile must leave, read back from
# the kernel (the firewall as what it does, not as which tool wrote it).
state() {
    {
        for l in eth0 eth1 eth0.1 br-lan; do
            [ -e "/sys/class/net/$l" ] || continue
            echo "link $l up=$(($(cat "/sys/class/net/$l/flags") & 1)) mtu=$(cat "/sys/class/net/$l/mtu") qlen=$(cat "/sys/class/net/$l/tx_queue_len") master=$(basename "$(readlink "/sys/class/net/$l/master" 2>/dev/null)" 2>/dev/null)"
            ip -o addr show dev "$l" scope global | awk '{ print "addr", $2, $4 }'
        done
        [ ! -e /proc/net/vlan/config ] || awk -F'|' 'NR > 2 { gsub(/ /, ""); print "vlan", $1, $2, $3 }' /proc/net/vlan/config
        for k in $SYSCTLS; do echo "sysctl $k=$(sysctl -n "$k")"; done
        echo "read_ahead_kb $(cat /sys/block/sda/queue/read_ahead_kb)"
        echo "udhcpc $(pidof udhcpc >/dev/null && echo running || echo none)"
        [ "$NFS" = 0 ] || exportfs -v | tr -s ' \t' ' ' | tr '\n' ' ' | sed 's/ \// \n\//g' | sed 's/^ *//; s/ *$//' | grep . | sed 's/^/export /'
        echo "watchdog $(cat $WDT/state) timeout=$(cat $WDT/timeout)"
    } | sed "s/^/$1 state: /"
}
# The untimed pass traces the anchors' scripts (sh -x), for the log. For
# nasboot's side an apply of the profile without its [watchdog] section
# loads the modules first: on this emulated board the kernel's first
# module loads for the router's rule set (a modprobe each) outlast the
# profile's 20 s watchdog timeout within that one step (a real board's
# take a second or two); they are counted with the variant's.
TRACE=-x
for v in $VARIANTS; do
    reset "$v"
    m0=$(wc -l </proc/modules)
    case $v in
        nasboot-*)
            awk '/^\[watchdog\]/ { skip = 1; next } /^\[/ { skip = 0 } !skip' "/etc/bench/${v#nasboot-}.toml" >/tmp/warm.toml
            nasboot -q -c /tmp/warm.toml apply >/tmp/out 2>&1 || fail "$v: the warm-up apply failed: $(cat /tmp/out)"
            reset "$v"
            ;;
    esac
    rm -f /tmp/run.out
    run "$v" >/tmp/out 2>&1 || fail "$v (untimed) failed: $(cat /tmp/out /tmp/run.out 2>/dev/null)"
    echo "bench: $v modules: $(($(wc -l </proc/modules) - m0))"
    sed "s/^/$v untimed: /" /tmp/out
done
TRACE=
r=1
while [ "$r" -le "$RUNS" ]; do
    for v in $VARIANTS; do
        reset "$v"
        rm -f /tmp/run.out
        f0=$(forks)
        t0=$(now)
        run "$v" >/tmp/out 2>&1 || fail "$v failed: $(cat /tmp/out /tmp/run.out 2>/dev/null)"
        t1=$(now)
        f1=$(forks)
        echo "bench: $v $r $((t1 - t0)) $((f1 - f0))"
        for p in $(pidof udhcpc); do
            awk -v v="$v" '{ print "bench-cpu: " v " udhcpc " $14 + $15 + $16 + $17 }' "/proc/$p/stat"
        done
        if [ "$r" = "$RUNS" ] && [ "$v" != empty ]; then
            state "$v"
            case $v in nasboot-*) sed "s/^/$v output: /" /tmp/run.out ;; esac
        fi
    done
    r=$((r + 1))
done
# The parts (bench.parts=N, N rounds): with the profile applied by `run`
# and the daemon stopped, what nasboot's side is made of. "bench-part:
# VARIANT PART MICROSECONDS PROCESSES" for
#   start     `nasboot --version`: the exec and start of any run
#   check     `nasboot -q check`: the start and the profile read and
#             validated
#   plan      `nasboot -q plan`: the start, the profile, the observation
#             of the board and the plan, nothing to change, printed with
#             the rendered files and the listener notes
#   apply     `nasboot -q apply`: the same, applied: what `run` does
#             before it pets the watchdog, on a board that needs no change
#             (nasboot's own share of a boot; the watchdog opened and
#             closed)
#   exportfs  `exportfs -ra` of the export table nasboot wrote (the NAS)
#   boot      `nasboot run --background` from the reset state (a timed
#             run's boot), the daemon then stopped
#   plan-before, apply-before, boot-before
#             the same with /usr/local/bin/nasboot-before, where
#             bench-boot --before put another build
# and, from each timed run's end, "bench-cpu: VARIANT udhcpc TICKS": the
# DHCP client's CPU time (itself and its event script's forks, in
# USER_HZ ticks) while it ran beside the boot.
PARTS=$(sed -n 's/.*bench.parts=\([0-9]*\).*/\1/p' /proc/cmdline)
part() {
    pv=$1 pn=$2
    shift 2
    f0=$(forks)
    t0=$(now)
    "$@" >/tmp/out 2>&1 || fail "part $pv $pn failed: $(cat /tmp/out)"
    t1=$(now)
    f1=$(forks)
    echo "bench-part: $pv $pn $((t1 - t0)) $((f1 - f0))"
}
if [ "${PARTS:-0}" -gt 0 ]; then
    for v in $VARIANTS; do
        case $v in nasboot-*) ;; *) continue ;; esac
        prof=/etc/bench/${v#nasboot-}.toml
        reset "$v"
        run "$v" >/tmp/out 2>&1 || fail "$v (parts) failed: $(cat /tmp/out /tmp/run.out 2>/dev/null)"
        stop nasboot
        r=1
        while [ "$r" -le "$PARTS" ]; do
            part "$v" empty :
            part "$v" start nasboot --version
            part "$v" check nasboot -q -c "$prof" check
            part "$v" plan nasboot -q -c "$prof" plan
            part "$v" apply nasboot -q -c "$prof" apply
            if [ -e /usr/local/bin/nasboot-before ]; then
                chmod +x /usr/local/bin/nasboot-before
                part "$v" plan-before /usr/local/bin/nasboot-before -q -c "$prof" plan
                part "$v" apply-before /usr/local/bin/nasboot-before -q -c "$prof" apply
            fi
            if [ "$v" = nasboot-nas ] && [ "$NFS" = 1 ]; then part "$v" exportfs exportfs -ra; fi
            # The boot itself, from the reset state (as a timed run), the
            # daemon stopped after: with --before, the two builds' boots in
            # the same rounds.
            reset "$v"
            part "$v" boot nasboot -c "$prof" run --background --pidfile /run/nasboot.pid
            stop nasboot
            if [ -e /usr/local/bin/nasboot-before ]; then
                reset "$v"
                part "$v" boot-before /usr/local/bin/nasboot-before -c "$prof" run --background --pidfile /run/nasboot.pid
                stop nasboot-before
            fi
            r=$((r + 1))
        done
    done
fi
reset empty
