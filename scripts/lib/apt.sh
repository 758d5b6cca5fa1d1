# shellcheck shell=bash
# apt_update: `apt-get update`, retried every 5 s for 5 minutes at most;
# returns 1 if it never succeeded (each caller decides what that means).
# Another apt's lists lock is why: CI builds a big-endian board in the
# background beside the suites, and DPkg::Lock::Timeout covers only
# dpkg's lock, not the lists lock of another `apt-get update`. Output to
# standard error. Sourced by scripts/lib/toolchain.sh, scripts/lib/board.sh
# and tests/lib.sh.
apt_update() {
    local n=0
    until DEBIAN_FRONTEND=noninteractive apt-get -q update >&2; do
        n=$((n + 1))
        [ "$n" -lt 60 ] || return 1
        sleep 5
    done
}
