#!/bin/sh
# The anchor of scripts/bench-boot --board (ppc, mips-be) for the router
# profile: the boot script a BusyBox-only router runs for what
# board/wndr3700-router.toml sets, with BusyBox's applets and the board's
# iptables (these boards have no nft):
# - the links, forwarding and the WAN's DHCP client
#   (tests/board/boot-router-links.sh);
# - iptables-restore and ip6tables-restore of the same profile's rule set
#   as nasboot renders it for iptables (rendered on the board before the
#   runs: /etc/bench/router.v4, router.v6), each loaded once;
# - BusyBox's watchdog daemon with the profile's timeout and interval.
# The caller waits until the watchdog is armed.
set -e
# shellcheck source=tests/board/boot-router-links.sh
. /etc/bench/router-links.sh
iptables-restore --noflush </etc/bench/router.v4
ip6tables-restore --noflush </etc/bench/router.v6
watchdog -t 5 -T 20 /dev/watchdog
