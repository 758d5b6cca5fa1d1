#!/usr/bin/env bash
# The router profile on the emulated MIPS 24K board (QEMU malta, Debian's
# mipsel kernel with its nf_flow_table modules): the checks of
# tests/firewall/router-suite.sh, NAT, a port forward and flows seen
# [OFFLOAD], with no nft binary on the board, and a kernel without the fib
# expression's module first. Needs root. About 2 minutes.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
RB_BOARD_NAME=mipsel
# shellcheck source=tests/routerboard.sh
. "$here/../routerboard.sh"
# shellcheck source=tests/firewall/router-suite.sh
. "$here/router-suite.sh"
router_suite
t_done
