# shellcheck shell=bash
# Library behind scripts/board: the emulated boards. The default (mipsel):
# QEMU malta, Debian's mipsel 4kc-malta kernel, busybox-static:mipsel in an
# initramfs. `--board ppc`: big-endian QEMU g3beige with a kernel and
# BusyBox cross-built from Debian's sources (nft only on request:
# NASBOOT_BOARD_NFT in board/build.sh); mips-be and sparc64 the same way
# (scripts/lib/board/boards.sh).
#
# Sourced by scripts/board; everything here and in scripts/lib/board/ is a
# function or a constant.
# No eval: every command is built as an argv array.

BOARD_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BOARD_CACHE=${BOARD_CACHE:-$BOARD_REPO/target/board}
# The mipsel board's downloaded Debian packages (its kernel, BusyBox, the
# user space the suites and benches put into the initramfs), kept outside
# the clone: a fresh clone (CI's) unpacks them from here instead of
# downloading them again. A package's file name carries its version, and
# the archive never changes a version's contents, so the name is the key.
BOARD_DEBS=${BOARD_DEBS:-${NASBOOT_CACHE:-/var/cache/nasboot}/debs-mipsel}
BOARD_QEMU=${BOARD_QEMU:-} # board_select's default unless set

# Exit codes of `scripts/board run` (also printed as "board: outcome=...").
BOARD_RC_POWEROFF=0      # guest powered off; script (if any) exited 0
BOARD_RC_ERROR=1         # harness error (qemu failed to start, bad input...)
BOARD_RC_USAGE=2         # bad command line
BOARD_RC_SCRIPT_FAILED=3 # guest powered off but the guest script exited != 0
BOARD_RC_RESET=4         # board reset (watchdog, reboot -f): qemu left via -no-reboot
BOARD_RC_PANIC=5         # kernel panic (panic=1 then reset)
BOARD_RC_LOG=6           # outcome as expected but a --expect-log/--reject-log failed
BOARD_RC_TIMEOUT=124     # --timeout exceeded, qemu killed
BOARD_RC_NOBOOT=7        # no /init within --boot-timeout, qemu killed

board_say() { printf 'board: %s\n' "$*" >&2; }
board_die() { printf 'board: error: %s\n' "$*" >&2; exit "$BOARD_RC_ERROR"; }
board_usage_error() { printf 'board: usage: %s (see scripts/board help)\n' "$*" >&2; exit "$BOARD_RC_USAGE"; }

board_help() {
    cat <<'EOF'
scripts/board [--board NAME] COMMAND [ARGS]

  --board NAME        mipsel (default; QEMU malta, Debian's mipsel kernel and
                      modules) | ppc (big-endian QEMU g3beige, PowerPC 750;
                      kernel and BusyBox cross-built from Debian's sources,
                      nft too with NASBOOT_BOARD_NFT=auto or yes, cached in
                      /var/cache/nasboot; e1000 NICs;
                      the i6300esb watchdog) | mips-be (malta, 24Kc, big-endian,
                      built the same way; softdog) | sparc64 (QEMU sun4u,
                      UltraSPARC IIi, built the same way; sunhme and e1000
                      NICs; the i6300esb watchdog). NASBOOT_BOARD sets it too.

  fetch [--refresh]   install host tools (apt) and cache kernel + busybox under
                      target/board (idempotent; --refresh re-resolves the kernel);
                      built boards: build what is not cached (kernel 4-8 min)
  run [OPTIONS]       build an initramfs and boot the board once
  modules NAME...     print the resolved insmod order (deps, softdeps) for NAMEs
  info                kernel version, cache paths, key module availability
  target              print the board's nasboot build (a Rust target triple:
                      BOARD_TARGET in scripts/lib/board/boards.sh, the one
                      table the benchmarks and suites read)
  disk new IMG [MB]   create an ext2 image (default 16 MB)
  disk cat IMG PATH   print a file from an image (debugfs, no mount needed)
  disk ls IMG [DIR]   list a directory of an image
  disk put IMG SRC DEST  copy a host file into an image (e2fsck -y first)
  debs PKG...         unpack PKG:mipsel + its lib* dependencies (cached) and
                      print the tree (what run --deb puts into the initramfs)
  smoke               self-test: poweroff, softdog reset, magic close, disk
                      persistence, e1000 + pcnet32 with hostfwd; prints timings
  help

run OPTIONS
  --bin FILE          static mipsel binary -> /usr/sbin/nasboot
  --profile FILE      -> /etc/nasboot.toml
  --script FILE       busybox sh script run by /init after mounts and modules;
                      when it returns, /init prints "board: script-exit=N" and
                      powers off. It may also `poweroff -f` / `reboot -f` itself.
  --file SRC:DEST     extra file into the initramfs (repeatable; DEST absolute)
  --module 'NAME [PARAM=V ...]'  include and insmod at boot, deps first
                      (repeatable; default list is just `softdog`; giving
                      softdog again replaces its params)
  --no-module NAME    drop NAME from the boot load list
  --with-module NAME  include (with deps) but do not load; use `modprobe NAME`
  --exec-init PROG    after mounts and modules, /init execs PROG as PID 1
                      (e.g. /lib/systemd/systemd) instead of running the
                      script; PROG's own units must run /board/script,
                      print "board: script-exit=N" and power off
  --deb PKG           unpack Debian's mipsel PKG and the lib* packages it
                      depends on (recursively) into the root, for dynamic
                      user space (e.g. nfs-kernel-server, rpcbind); repeatable.
                      Downloads need the network: run `debs PKG...` first
                      when the board itself boots inside a namespace
  --disk IMG          attach IMG as IDE disk (/dev/sda), created as ext2 if
                      missing, else checked first (e2fsck -y: a reset leaves
                      it unclean); mounted at /data (mipsel loads ata_piix,
                      ext4; the built boards have their IDE driver and ext4
                      built in)
  --disk-size MB      size when creating (default 16)
  --disk-throttle IOPS:BPS  QEMU block throttling on the disk
                      (throttling.iops-total, throttling.bps-total; no
                      iops-size: every request counts as one I/O)
  --no-mount          attach the disk but do not mount it
  --nic MODEL[:BACKEND]  add a NIC (repeatable, eth0, eth1... in order).
                      MODEL: e1000 | pcnet (=pcnet32) | virtio (mipsel), e1000
                      (ppc, mips-be), e1000 | sunhme (sparc64, where eth0,
                      eth1... are e1000s first, then hme); its driver is
                      loaded at boot. BACKEND: user (default; slirp, restrict=on,
                      guest should use 10.0.2.15/24) | tap:IFNAME (existing tap,
                      e.g. in a netns: run the harness under `ip netns exec`) |
                      none (no link partner)
  --hostfwd RULE      forward host port to the first user NIC, e.g.
                      tcp:127.0.0.1:18080-:80 (host address must be 127.0.0.1)
  --append ARGS       extra kernel command line
  --mem MB            guest RAM (default 256; sparc64 512)
  --timeout SECONDS   kill qemu after this (default 120) -> outcome timeout
  --boot-timeout S    kill qemu when /init has not started after S seconds
                      -> outcome noboot, exit 7, log kept (default: 60 on the
                      built boards, 0 = none on mipsel)
  --log FILE          serial log (default target/board/last.log)
  --result FILE       write outcome=, script_exit=, wall_s= lines
  --expect OUTCOME    poweroff | reset | panic | timeout | noboot: exit 0 iff it happened
  --expect-log ERE    log must match (grep -E), repeatable
  --reject-log ERE    log must not match, repeatable
  --qemu-arg ARG      extra qemu argument (repeatable)
  -v, --verbose       stream the serial console to stderr
  --keep              keep the staging dir (printed)

Exit codes: 0 poweroff (script ok) | 3 poweroff, script failed | 4 reset |
5 panic | 124 timeout | 7 no boot | 6 log assertion failed | 1 harness error |
2 usage.
With --expect X: 0 iff outcome X happened (and log assertions held).
EOF
}

# One file per concern, all sourced here; each defines functions (and the
# module index's maps) only.
board_lib_dir=$(dirname "${BASH_SOURCE[0]}")/board
# shellcheck source=scripts/lib/apt.sh
. "$board_lib_dir/../apt.sh"
# shellcheck source=scripts/lib/board/boards.sh
. "$board_lib_dir/boards.sh"
# shellcheck source=scripts/lib/musl.sh
. "$board_lib_dir/../musl.sh"
# shellcheck source=scripts/lib/board/build.sh
. "$board_lib_dir/build.sh"
# shellcheck source=scripts/lib/board/fetch.sh
. "$board_lib_dir/fetch.sh"
# shellcheck source=scripts/lib/board/modules.sh
. "$board_lib_dir/modules.sh"
# shellcheck source=scripts/lib/board/debs.sh
. "$board_lib_dir/debs.sh"
# shellcheck source=scripts/lib/board/disk.sh
. "$board_lib_dir/disk.sh"
# shellcheck source=scripts/lib/board/init.sh
. "$board_lib_dir/init.sh"
# shellcheck source=scripts/lib/board/run.sh
. "$board_lib_dir/run.sh"
# shellcheck source=scripts/lib/board/smoke.sh
. "$board_lib_dir/smoke.sh"

# ----------------------------------------------------------------- main ---

board_main() {
    local board=${NASBOOT_BOARD:-mipsel}
    while [ $# -gt 0 ]; do
        case $1 in
            --board) [ $# -ge 2 ] || board_usage_error "--board NAME"; board=$2; shift 2 ;;
            --board=*) board=${1#--board=}; shift ;;
            *) break ;;
        esac
    done
    board_select "$board"
    [ $# -gt 0 ] || { board_help; exit "$BOARD_RC_USAGE"; }
    local cmd=$1
    shift
    case $cmd in
        fetch) board_fetch "$@" ;;
        run) board_run "$@" ;;
        modules) board_modules_cmd "$@" ;;
        info) board_info "$@" ;;
        target) [ $# -eq 0 ] || board_usage_error "target takes no arguments"; printf '%s\n' "$BOARD_TARGET" ;;
        disk) board_disk_cmd "$@" ;;
        debs) board_debs_tree "$@" && printf '%s\n' "$board_debs_dir" ;;
        smoke) board_smoke "$@" ;;
        http-get) board_http_get "$@" ;;
        help | -h | --help) board_help ;;
        *) board_usage_error "unknown command '$cmd'" ;;
    esac
}
