# shellcheck shell=bash
# Debian's packages for the build, the boards and the suites, one way for
# all: scripts/lib/toolchain.sh, scripts/lib/board.sh (fetch, build) and
# tests/lib.sh source this. Each caller decides what a failure means
# (stop, or go on with what there is) and what it says. Output goes to
# standard error.

# shellcheck source=scripts/lib/lock.sh
. "$(dirname "${BASH_SOURCE[0]}")/lock.sh"

# apt_locked CMD...: CMD holding the apt lock (lock_run): DPkg::Lock::Timeout
# waits for dpkg's lock but not for the lists lock of `apt-get update`
# nor for the archives' lock of a download.
apt_locked() { lock_run apt "$@"; }

# apt_update: `apt-get update`, retried every 5 s for 5 minutes at most;
# returns 1 if it never succeeded. Another apt's lists lock is why: CI
# builds a big-endian board in the background beside the suites, and
# DPkg::Lock::Timeout covers only dpkg's lock, not the lists lock of
# another `apt-get update`.
apt_update() { apt_locked apt_update_locked; }
apt_update_locked() {
    local n=0
    until DEBIAN_FRONTEND=noninteractive apt-get -q update >&2; do
        n=$((n + 1))
        [ "$n" -lt 60 ] || return 1
        sleep 5
    done
}

# apt_missing PKG...: the packages dpkg does not have installed, one a
# line, each once.
apt_missing() {
    local seen=' ' p
    for p in "$@"; do
        case $seen in *" $p "*) continue ;; esac
        seen="$seen$p "
        # (not `dpkg -s | grep -q`: under pipefail grep's early exit fails it)
        [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || echo "$p"
    done
}

# apt_install PKG...: install those of PKG that are missing (needs root);
# returns 1 if that failed. A machine with no package lists gets them
# first; lists too old for the archive (an install that fails) are
# fetched again and the install tried once more. dpkg's lock is waited
# for up to 15 minutes: scripts/test may be building a board in the
# background, whose apt-get holds it for a while.
apt_install() {
    [ -n "$(apt_missing "$@")" ] || return 0
    apt_locked apt_install_locked "$@"
}
apt_install_locked() {
    local missing
    mapfile -t missing < <(apt_missing "$@")
    [ "${#missing[@]}" -eq 0 ] && return 0
    if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
        apt_update || return 1
    fi
    local apt=(apt-get -o DPkg::Lock::Timeout=900 -y -q --no-install-recommends install)
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" "${missing[@]}" >&2 && return 0
    apt_update || return 1
    DEBIAN_FRONTEND=noninteractive "${apt[@]}" "${missing[@]}" >&2
}
