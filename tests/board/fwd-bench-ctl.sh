#!/bin/sh
# Guest control handler for scripts/bench-forward and
# tests/firewall/board-router.sh (busybox sh, run by `nc -l -p 7000 -e`):
# reads one command from the host, puts the board's forwarding rules into
# that configuration from a clean slate, and answers
# "ready CONFIG conntrack=yes|no flowtable=yes|no".
#   none          no rules: netfilter modules unloaded, or where they are
#                 built in, no table left; plain routing, but for a legacy
#                 nat table a bubba or nasboot-ipt row made earlier in the
#                 boot, which keeps conntrack on (the answer says
#                 conntrack=yes then)
#   bubba         the Bubba 2's shipped rules (/etc/bench/bubba2-firewall.conf),
#                 iptables-legacy-restore, as on the board
#   fw4           OpenWrt fw4's default rule set (/etc/bench/fw4-default.nft,
#                 LAN = eth1, WAN = eth0)
#   fw4-offload   the same with software flow offloading (fw4-offload.nft)
#   nasboot-off   nasboot firewall apply, /etc/bench/router-off.toml
#                 (forward = true, flow_offload = "off")
#   nasboot-auto  nasboot firewall apply, /etc/nasboot.toml
#                 (forward = true, flow_offload = "auto")
#   nasboot-ipt   nasboot firewall apply, /etc/bench/router-ipt.toml (the
#                 same profile with backend = "iptables")
#   stat          answer "stat BUSY TOTAL": the CPU's busy and total time so
#                 far, in USER_HZ ticks (/proc/stat)
#   ct [PORT]     answer "ct ENTRIES OFFLOADED": conntrack entries (with
#                 source port PORT), and those marked [OFFLOAD]
#                 (/proc/net/nf_conntrack)
#   status        answer "status LINE": nasboot status's offloaded-flows line
#   profile-reset the kernel's profile (/proc/profile: a boot with
#                 profile=N, CONFIG_PROFILING) set to zero; answer
#                 "profile reset"
#   profile-read  answer "profile FUNCTION:SAMPLES ...": the samples since,
#                 per kernel function (/proc/kallsyms as the map)
#   stop          end the benchmark
# Every configuration but none starts with the flowtable modules loaded,
# as the board boots (tests/routerboard.sh). With /etc/bench/standin the
# nasboot rows load tests/board/router-standin.nft instead of running
# nasboot (scripts/bench-forward BENCH_FORWARD_STANDIN=1), and say so.
read -r cmd arg
clean() {
    if command -v nft >/dev/null; then
        nft flush ruleset 2>/dev/null
    else
        # No nft (the built boards): nasboot's own tables go with a
        # profile = "off" apply, through netlink.
        printf '[board]\nname = "clean"\n[firewall]\nprofile = "off"\n' >/tmp/clean.toml
        nasboot -q -c /tmp/clean.toml firewall apply 2>/dev/null
    fi
    # Only the legacy tables the kernel has: naming one makes it, and on a
    # kernel with iptables built in (the built boards) a table once made
    # keeps its hooks for the boot; the nat table's keep conntrack on for
    # every packet, so none would not be plain routing. A table there is
    # flushed and its policies set back to ACCEPT (nasboot's rows set
    # DROP); where they are modules, unloading them below does the same.
    [ ! -r /proc/net/ip_tables_names ] || while read -r t; do
        iptables -t "$t" -F 2>/dev/null
        iptables -t "$t" -X 2>/dev/null
        [ "$t" != filter ] || for c in INPUT FORWARD OUTPUT; do iptables -P "$c" ACCEPT 2>/dev/null; done
    done </proc/net/ip_tables_names
    [ ! -r /proc/net/ip6_tables_names ] || while read -r t; do
        ip6tables -t "$t" -F 2>/dev/null
        ip6tables -t "$t" -X 2>/dev/null
        [ "$t" != filter ] || for c in INPUT FORWARD OUTPUT; do ip6tables -P "$c" ACCEPT 2>/dev/null; done
    done </proc/net/ip6_tables_names
    sh /etc/bench/nf-unload
}
boot_modules() {
    # A kernel without modules (the built boards) has them built in.
    [ -e /proc/modules ] || return 0
    modprobe nf_flow_table && modprobe nf_flow_table_inet && modprobe nft_flow_offload
}
src=
nasboot_row() {
    if [ -f /etc/bench/standin ]; then
        src="src=standin "
        if [ "$1" = off ]; then
            grep -v '# offload' /etc/bench/standin.nft | nft -f -
        else
            sed 's/ # offload$//' /etc/bench/standin.nft | nft -f -
        fi
    else
        src="src=nasboot "
        nasboot -c "$2" firewall apply >/tmp/row.out 2>&1 || { cat /tmp/row.out >&2; return 1; }
    fi
}
{
case $cmd in
    none) clean ;;
    bubba) clean && boot_modules && iptables-restore </etc/bench/bubba2-firewall.conf ;;
    fw4) clean && boot_modules && nft -f /etc/bench/fw4-default.nft ;;
    fw4-offload) clean && boot_modules && nft -f /etc/bench/fw4-offload.nft ;;
    nasboot-off) clean && boot_modules && nasboot_row off /etc/bench/router-off.toml ;;
    nasboot-auto) clean && boot_modules && nasboot_row auto /etc/nasboot.toml ;;
    nasboot-ipt) clean && boot_modules && nasboot_row ipt /etc/bench/router-ipt.toml ;;
    stat)
        read -r _ us ni sy id io hi si _ </proc/stat
        echo "stat $((us + ni + sy + hi + si)) $((us + ni + sy + id + io + hi + si))"
        exit 0
        ;;
    ct)
        n=0
        o=0
        pat=.
        [ -z "$arg" ] || pat="sport=$arg "
        if [ -r /proc/net/nf_conntrack ]; then
            n=$(grep -c -- "$pat" /proc/net/nf_conntrack)
            o=$(grep -- "$pat" /proc/net/nf_conntrack | grep -c 'OFFLOAD')
        fi
        echo "ct $n $o"
        exit 0
        ;;
    status)
        echo "status $(nasboot status 2>&1 | grep -i -m1 'offloaded' | tr -s ' ')"
        exit 0
        ;;
    profile-reset)
        if [ -w /proc/profile ]; then echo >/proc/profile && echo "profile reset"; else echo "error profile-reset: no /proc/profile (a kernel with CONFIG_PROFILING, booted with profile=4)"; fi
        exit 0
        ;;
    profile-read)
        # The kernel's own text symbols (a module's have a fourth field),
        # by address; /proc/profile: a header word, then a count per
        # bucket of 2^N bytes of the text from _stext (profile=N), in the
        # CPU's byte order. The header is meant to be the bucket size, but
        # it is the first four bytes of a long: 0 on a 64-bit big-endian
        # kernel (sparc64), so the size comes from the command line.
        [ -s /tmp/ksyms ] || awk 'NF == 3 && $2 ~ /^[tTwW]$/ { print $1, $3 }' /proc/kallsyms | sort >/tmp/ksyms
        pshift=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^profile=\([0-9][0-9]*\)$/\1/p')
        echo "profile $(od -An -tu4 -v /proc/profile | awk -v step=$((1 << ${pshift:-2})) '
            function hex(s, i, n) {
                n = 0
                for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", tolower(substr(s, i, 1))) - 1
                return n
            }
            NR == FNR { k++; a[k] = hex($1); nm[k] = $2; if ($2 == "_stext") st = a[k]; next }
            {
                for (i = 1; i <= NF; i++) {
                    if (j > 0 && $i > 0) {
                        pc = st + (j - 1) * step
                        lo = 1
                        hi = k
                        while (lo < hi) { m = int((lo + hi + 1) / 2); if (a[m] <= pc) lo = m; else hi = m - 1 }
                        c[nm[lo]] += $i
                    }
                    j++
                }
            }
            END { for (f in c) printf "%s:%d ", f, c[f] }' /tmp/ksyms -)"
        exit 0
        ;;
    stop) : >/tmp/bench-stop ;;
    *) echo "error unknown command '$cmd'"; exit 0 ;;
esac
} 2>/tmp/ctl.err
rc=$?
# conntrack=yes: the row's packets may be tracked. Where conntrack is a
# module, while it is loaded. Where it is built in, its hooks are on while
# a rule set uses it (every row but none) or a legacy nat table is there
# (made by a bubba or nasboot-ipt row earlier in the boot: it stays).
ct=no
if [ -e /proc/modules ]; then
    [ -e /proc/sys/net/netfilter/nf_conntrack_count ] && ct=yes
elif [ "$cmd" != none ] || grep -qx nat /proc/net/ip_tables_names 2>/dev/null; then
    ct=yes
fi
ft=no
if command -v nft >/dev/null; then
    nft list flowtables 2>/dev/null | grep -q flowtable && ft=yes
else
    # No nft (the built boards): what nasboot's apply said it loaded.
    case $cmd in nasboot-*)
        grep -q 'with the flowtable) through netlink' /tmp/row.out && ! grep -q 'without the flowtable' /tmp/row.out && ft=yes ;;
    esac
fi
if [ "$rc" = 0 ]; then echo "ready $cmd ${src}conntrack=$ct flowtable=$ft"; else echo "error $cmd exit $rc: $(grep -m2 . /tmp/ctl.err | tr '\n' ' ')"; fi
