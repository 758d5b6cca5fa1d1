#!/bin/sh
# Guest helper (busybox sh) of the boards' benchmarks
# (tests/board/fwd-bench-ctl.sh, tests/board/fwload-bench.sh): unload
# every netfilter module the kernel has loaded that nothing holds,
# dependents first whatever the order. A kernel without modules (the
# built boards) has none to unload.
for pass in 1 2 3 4 5 6 7 8; do
    for m in $(lsmod | awk 'NR > 1 && /^(nf_|nft_|nfnetlink|x_tables|ip_tables|ip6_tables|iptable_|ip6table_|ipt_|ip6t_|xt_|libcrc32c|crc32c_generic)/ { print $1 }'); do
        rmmod "$m" 2>/dev/null
    done
done
: "$pass"
