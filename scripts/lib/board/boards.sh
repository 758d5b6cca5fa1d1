# shellcheck shell=bash
# The boards scripts/board can emulate (`--board NAME`, or NASBOOT_BOARD).
# Part of scripts/lib/board.sh, which sources it.
#
#   mipsel  (default) QEMU malta, Debian's mipsel 4kc-malta kernel and
#           modules, busybox-static:mipsel; softdog as a module
#   mips-be QEMU malta -cpu 24Kc, big-endian, built like ppc (softdog,
#           built in; e1000 NICs)
#   ppc     QEMU g3beige (PowerPC 750, big-endian), a kernel built from
#           Debian's linux-source-6.1 with board/kernel-common.config and
#           board/qemu-ppc/kernel.config (everything built in), a static
#           BusyBox and nft cross-built from Debian's sources
#           (scripts/lib/board/build.sh); e1000 NICs; the i6300esb PCI
#           watchdog
#   sparc64 QEMU sun4u (UltraSPARC IIi, big-endian, 64-bit), built like
#           ppc with board/qemu-sparc64/kernel.config; NICs sunhme (the
#           sun4u's Happy Meal) and e1000, on the second Simba bus; the
#           i6300esb watchdog there too
#
# A board is the set of BOARD_* values below; adding one (mips-be,
# sparc64) is a case here, a kernel fragment in board/<dir>/kernel.config
# and, when its QEMU differs, its lines in board_machine_args.

BOARD_NAMES='mipsel ppc mips-be sparc64'

# board_select NAME: the BOARD_* values of board NAME.
#   BOARD_KIND     debian (Debian's kernel package and modules) | built
#   BOARD_QEMU     the qemu-system program
#   BOARD_ARCH     the user-space architecture (cache names)
#   BOARD_KARCH    the kernel's ARCH=
#   BOARD_CROSS    the cross tools' prefix (Debian gcc-<triple>)
#   BOARD_DIR      its directory under board/ (kernel.config)
#   BOARD_CONSOLE  the kernel's console=
#   BOARD_WATCHDOG the hardware watchdog's driver ("" = softdog module)
#   BOARD_TARGET   the nasboot build the suites and benchmarks run on it
#                  (`scripts/board --board NAME target` prints it)
#   BOARD_FIRMWARE the firmware files QEMU loads, "path:package" each,
#                  the path under BOARD_QEMU_DATA (/usr/share;
#                  NASBOOT_QEMU_DATA replaces it, for the suite that checks
#                  the message when one is missing)
#   BOARD_QEMU_PKG the Debian packages with the emulator and its firmware
#   BOARD_KERNEL_MARK  an ERE the console log matches once the kernel runs
#   BOARD_NICS     the --nic models its kernel has drivers for
#   BOARD_MEM      run's default --mem (MB)
# shellcheck disable=SC2034  # read by the other parts of scripts/lib/board
board_select() {
    BOARD_NAME=$1
    BOARD_QEMU_DATA=${NASBOOT_QEMU_DATA:-/usr/share}
    BOARD_NICS=e1000
    BOARD_MEM=256
    case $1 in
        mipsel | malta)
            BOARD_NAME=mipsel
            BOARD_KIND=debian
            BOARD_QEMU=${BOARD_QEMU:-qemu-system-mipsel}
            BOARD_ARCH=mipsel
            BOARD_KARCH=mips
            BOARD_CROSS=mipsel-linux-gnu-
            BOARD_DIR=qemu-malta
            BOARD_CONSOLE=ttyS0
            BOARD_WATCHDOG=''
            BOARD_TARGET=mipsel-unknown-linux-musl
            BOARD_FIRMWARE=''
            BOARD_QEMU_PKG='qemu-system-mips'
            BOARD_KERNEL_MARK='Linux version'
            ;;
        ppc)
            BOARD_KIND=built
            BOARD_QEMU=${BOARD_QEMU:-qemu-system-ppc}
            BOARD_ARCH=powerpc
            BOARD_KARCH=powerpc
            BOARD_CROSS=powerpc-linux-gnu-
            BOARD_DIR=qemu-ppc
            BOARD_CONSOLE=ttyPZ0
            BOARD_WATCHDOG=i6300esb
            BOARD_TARGET=powerpc-unknown-linux-musl
            # OpenBIOS; the default VGA's ROM (kept: with -vga none
            # OpenBIOS stalls ~80 s).
            BOARD_FIRMWARE='qemu/openbios-ppc:qemu-system-data seabios/vgabios-stdvga.bin:seabios'
            BOARD_QEMU_PKG='qemu-system-ppc qemu-system-data seabios'
            # The banner goes to the boot console (udbg), not the serial log.
            BOARD_KERNEL_MARK='printk: console \[ttyPZ0\] enabled|Linux version'
            ;;
        mips-be)
            BOARD_KIND=built
            BOARD_QEMU=${BOARD_QEMU:-qemu-system-mips}
            BOARD_ARCH=mips
            BOARD_KARCH=mips
            BOARD_CROSS=mips-linux-gnu-
            BOARD_DIR=qemu-malta-be
            BOARD_CONSOLE=ttyS0
            BOARD_WATCHDOG=softdog
            BOARD_TARGET=mips-unknown-linux-musl
            BOARD_FIRMWARE=''
            BOARD_QEMU_PKG='qemu-system-mips'
            BOARD_KERNEL_MARK='Linux version'
            ;;
        sparc64)
            BOARD_KIND=built
            BOARD_QEMU=${BOARD_QEMU:-qemu-system-sparc64}
            BOARD_ARCH=sparc64
            BOARD_KARCH=sparc
            BOARD_CROSS=sparc64-linux-gnu-
            BOARD_DIR=qemu-sparc64
            BOARD_CONSOLE=ttyS0
            BOARD_WATCHDOG=i6300esb
            # Static glibc: musl has no SPARC port.
            BOARD_TARGET=sparc64-unknown-linux-gnu
            BOARD_FIRMWARE='qemu/openbios-sparc64:qemu-system-data'
            BOARD_QEMU_PKG='qemu-system-sparc qemu-system-data'
            BOARD_KERNEL_MARK='Linux version'
            BOARD_NICS='e1000 sunhme'
            BOARD_MEM=512
            ;;
        *) board_usage_error "--board must be one of: $BOARD_NAMES (got '$1')" ;;
    esac
    if [ "$BOARD_KIND" = built ]; then
        BOARD_CACHE=${NASBOOT_BOARD_CACHE:-$BOARD_REPO/target/board-$BOARD_NAME}
    fi
}

# board_machine_args: the QEMU machine, console and watchdog arguments
# (into the array board_machine).
# shellcheck disable=SC2034,SC2054 # board_run_boot's local; QEMU's comma lists
board_machine_args() {
    case $BOARD_NAME in
        mipsel) board_machine=(-M malta -vga none) ;;
        # -display none, not -vga none: OpenBIOS wants its VGA.
        ppc) board_machine=(-M g3beige -display none
            -device i6300esb -watchdog-action reset) ;;
        mips-be) board_machine=(-M malta -cpu 24Kc -vga none -display none) ;;
        # The watchdog on pciB (the only bus with free slots; the NICs go
        # there too: board_run_nics); on reset it powers off, since QEMU
        # would go on to a second boot that hangs in OpenBIOS without
        # -no-reboot, and the harness counts any exit without the
        # kernel's "Power down" as a reset.
        # -vga none: OpenBIOS does not wait for it here (and QEMU's VGA
        # would want SeaBIOS's ROM).
        sparc64) board_machine=(-M sun4u -vga none -display none
            -device i6300esb,bus=pciB -watchdog-action poweroff) ;;
    esac
}

# board_firmware_check: every firmware file the board's QEMU loads is
# there; else a message naming it, its package and the board.
board_firmware_check() {
    local fw file pkg
    for fw in $BOARD_FIRMWARE; do
        file=${fw%%:*}
        pkg=${fw#*:}
        [ -f "$BOARD_QEMU_DATA/$file" ] ||
            board_die "--board $BOARD_NAME: QEMU's firmware $BOARD_QEMU_DATA/$file is missing (Debian package $pkg; scripts/board --board $BOARD_NAME fetch installs it)"
    done
}
