#!/usr/bin/env bash
# The router profile on a big-endian board (NASBOOT_BE_BOARD, default ppc;
# scripts/test runs it once per board in NASBOOT_BE_BOARDS): the checks of
# tests/firewall/router-suite.sh with the board's own nasboot loading its
# rules through netlink into its big-endian kernel (the board has no nft):
# masquerade, a port forward, bulk TCP both ways, TCP and UDP flows seen
# [OFFLOAD] in the flowtable, and the WAN kept out. Needs root. About 2
# minutes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
RB_BOARD_NAME=${NASBOOT_BE_BOARD:-ppc}
# shellcheck source=tests/routerboard.sh
. "$here/../routerboard.sh"
# shellcheck source=tests/firewall/router-suite.sh
. "$here/router-suite.sh"
router_suite
t_done
