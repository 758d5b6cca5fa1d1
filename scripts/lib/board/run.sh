# shellcheck shell=bash
# One boot of the board: options, initramfs, QEMU, outcome (scripts/board run).
# Part of scripts/lib/board.sh, which sources it.

board_nic_driver() {
    if [ "$BOARD_KIND" = built ]; then
        case " $BOARD_NICS " in
            *" $1 "*) ;;
            *) board_usage_error "--board $BOARD_NAME: --nic model must be one of: $BOARD_NICS (got '$1')" ;;
        esac
    fi
    case $1 in
        e1000) echo e1000 ;;
        # sunhme.c's PCI driver is named "hme"
        sunhme) echo hme ;;
        pcnet | pcnet32) echo pcnet32 ;;
        virtio | virtio-net-pci) echo virtio_net ;;
        *) board_usage_error "--nic model must be e1000, pcnet or virtio (got '$1')" ;;
    esac
}

board_nic_device() {
    case $1 in
        e1000) echo e1000 ;;
        sunhme) echo sunhme ;;
        pcnet | pcnet32) echo pcnet ;;
        virtio | virtio-net-pci) echo virtio-net-pci ;;
    esac
}

# board_run and its parts: each part reads and sets board_run's locals
# (bash's dynamic scope), in the order board_run calls them.
board_run() {
    local bin='' profile='' script='' disk='' disk_size=16 disk_mount=1 exec_init='' disk_throttle=''
    local timeout=120 log='' result='' expect='' verbose=0 keep=0 mem=$BOARD_MEM append='' help=0 boot_timeout=''
    local -a files=() mod_specs=("softdog") no_mods=() with_mods=() nics=() hostfwds=() debs=()
    local -a expect_logs=() reject_logs=() qemu_extra=()
    local stage='' qrc=0 wall='' outcome='' script_exit='' rc=0 noboot=0 init_wall=''
    local -a load_names=() load_order=() qemu_disk=() qemu_net=()
    local -A load_params=()
    board_run_options "$@"
    if [ "$help" = 1 ]; then
        board_help
        return 0
    fi
    board_run_check
    board_ensure_ready
    [ "$BOARD_KIND" = built ] || board_mod_index
    board_run_stage_dir
    board_run_modules
    board_run_root
    board_run_disk
    board_run_nics
    board_run_boot
    board_run_outcome
    board_run_status
    return "$rc"
}

# The options into board_run's locals; -h/--help sets help and stops.
board_run_options() {
    local need
    while [ $# -gt 0 ]; do
        need=2
        case $1 in
            -v | --verbose) verbose=1; need=1 ;;
            --keep) keep=1; need=1 ;;
            --no-mount) disk_mount=0; need=1 ;;
            --bin | --profile | --script | --file | --module | --no-module | --with-module | --deb | --exec-init | \
                --disk | --disk-size | --disk-throttle | --nic | --hostfwd | --append | --mem | --timeout | \
                --log | --result | --expect | --expect-log | --reject-log | --qemu-arg | --boot-timeout)
                [ $# -ge 2 ] || board_usage_error "$1 needs a value"
                ;;
            --) shift; [ $# = 0 ] || board_usage_error "unexpected arguments after --: $*"; break ;;
            -h | --help) help=1; return 0 ;;
            *) board_usage_error "unknown run option '$1'" ;;
        esac
        case $1 in
            --bin) bin=$2 ;;
            --profile) profile=$2 ;;
            --script) script=$2 ;;
            --file) files+=("$2") ;;
            --module) mod_specs+=("$2") ;;
            --no-module) no_mods+=("$2") ;;
            --with-module) with_mods+=("$2") ;;
            --deb) debs+=("$2") ;;
            --exec-init) exec_init=$2 ;;
            --disk) disk=$2 ;;
            --disk-size) disk_size=$2 ;;
            --disk-throttle) disk_throttle=$2 ;;
            --nic) nics+=("$2") ;;
            --hostfwd) hostfwds+=("$2") ;;
            --append) append=$2 ;;
            --mem) mem=$2 ;;
            --timeout) timeout=$2 ;;
            --log) log=$2 ;;
            --result) result=$2 ;;
            --expect) expect=$2 ;;
            --expect-log) expect_logs+=("$2") ;;
            --reject-log) reject_logs+=("$2") ;;
            --qemu-arg) qemu_extra+=("$2") ;;
            --boot-timeout) boot_timeout=$2 ;;
        esac
        shift "$need"
    done
}

# Values and files named by the options, before anything is fetched.
board_run_check() {
    case $timeout in '' | *[!0-9]*) board_usage_error "--timeout SECONDS (integer)" ;; esac
    case $mem in '' | *[!0-9]*) board_usage_error "--mem MB (integer)" ;; esac
    case $disk_throttle in '' | [1-9]*:[1-9]*) ;; *) board_usage_error "--disk-throttle IOPS:BYTES-PER-S (integers)" ;; esac
    case ${disk_throttle#*:} in *[!0-9]*) board_usage_error "--disk-throttle IOPS:BYTES-PER-S (integers)" ;; esac
    case ${disk_throttle%%:*} in *[!0-9]*) board_usage_error "--disk-throttle IOPS:BYTES-PER-S (integers)" ;; esac
    [ -z "$disk_throttle" ] || [ -n "$disk" ] || board_usage_error "--disk-throttle needs --disk"
    # Built boards give up on a boot that has not reached /init in 60 s.
    if [ -z "$boot_timeout" ]; then
        boot_timeout=0
        [ "$BOARD_KIND" != built ] || boot_timeout=60
    fi
    case $boot_timeout in *[!0-9]*) board_usage_error "--boot-timeout SECONDS (integer, 0 = none)" ;; esac
    if [ "$BOARD_KIND" = built ]; then
        { [ ${#mod_specs[@]} = 1 ] && [ ${#with_mods[@]} = 0 ] && [ ${#no_mods[@]} = 0 ]; } ||
            board_usage_error "--board $BOARD_NAME has no modules (its kernel has everything built in): give driver parameters with --append (e.g. softdog.soft_margin=5)"
        [ ${#debs[@]} = 0 ] || board_usage_error "--board $BOARD_NAME has no Debian user space (--deb): Debian 12 has no $BOARD_ARCH packages"
    fi
    case $expect in '' | poweroff | reset | panic | timeout | noboot) ;; *) board_usage_error "--expect poweroff|reset|panic|timeout|noboot" ;; esac
    local f
    for f in "$bin" "$profile" "$script"; do
        [ -z "$f" ] || [ -f "$f" ] || board_die "no such file: $f"
    done
    local r
    for r in "${nics[@]}"; do
        board_nic_driver "${r%%:*}" >/dev/null
    done
    for r in "${hostfwds[@]}"; do
        case $r in
            tcp:127.0.0.1:*-:* | udp:127.0.0.1:*-:* | tcp:127.0.0.1:*-10.0.2.15:* | udp:127.0.0.1:*-10.0.2.15:*) ;;
            *) board_usage_error "--hostfwd must look like tcp:127.0.0.1:HOSTPORT-:GUESTPORT (got '$r')" ;;
        esac
    done
}

# The staging directory (removed at exit unless --keep) and the log.
board_run_stage_dir() {
    mkdir -p "$BOARD_CACHE/tmp"
    stage=$(mktemp -d "$BOARD_CACHE/tmp/run.XXXXXX")
    if [ "$keep" = 0 ]; then
        # shellcheck disable=SC2064  # expand now: stage is local
        trap "rm -rf '$stage'" EXIT
    fi
    [ -n "$log" ] || log=$BOARD_CACHE/last.log
    mkdir -p "$(dirname "$log")"
}

# The module load list (name -> params, in order of first mention) and
# every module to include, dependencies first.
board_run_modules() {
    local spec name params n skip
    if [ "$BOARD_KIND" = built ]; then
        board_mod_order=()
        return 0
    fi
    if [ -n "$disk" ]; then
        mod_specs+=("ata_piix")
        [ "$disk_mount" = 1 ] && mod_specs+=("crc32c_generic" "ext4")
    fi
    for n in "${nics[@]}"; do
        # virtio_net binds to its device through the PCI transport, which
        # is a module of its own that nothing depends on.
        [ "$(board_nic_driver "${n%%:*}")" != virtio_net ] || mod_specs+=("virtio_pci")
        mod_specs+=("$(board_nic_driver "${n%%:*}")")
    done
    for spec in "${mod_specs[@]}"; do
        read -r name params <<<"$spec"
        [ -n "$name" ] || continue
        name=$(board_mod_norm "$name")
        skip=0
        for n in "${no_mods[@]}"; do
            [ "$(board_mod_norm "$n")" = "$name" ] && skip=1
        done
        [ "$skip" = 1 ] && continue
        [ -n "${load_params[$name]+set}" ] || load_names+=("$name")
        load_params[$name]=$params
    done
    # shellcheck disable=SC2034  # board_mod_resolve's map (modules.sh)
    board_mod_seen=()
    board_mod_order=()
    for name in "${load_names[@]}"; do
        board_mod_resolve "$name"
    done
    load_order=("${board_mod_order[@]}")
    for name in "${with_mods[@]}"; do
        board_mod_resolve "$name"
    done
}

# The initramfs root: busybox, /init, modules, debs, nasboot, profile,
# script and --file extras.
board_run_root() {
    local kv=${BOARD_KVER:-built-in}
    mkdir -p "$stage/root/bin" "$stage/root/dev" "$stage/root/proc" "$stage/root/sys" \
        "$stage/root/etc/board" "$stage/root/board" "$stage/root/lib/modules/$kv" \
        "$stage/root/usr/sbin" "$stage/root/root"
    if [ ${#debs[@]} -gt 0 ]; then
        board_debs_tree "${debs[@]}"
        # shellcheck disable=SC2154  # set by board_debs_tree (debs.sh)
        cp -a "$board_debs_dir/." "$stage/root/"
    fi
    if [ "$BOARD_KIND" = built ]; then
        cp "$BOARD_BUSYBOX" "$stage/root/bin/busybox"
        [ -z "$BOARD_NFT" ] || cp "$BOARD_NFT" "$stage/root/usr/sbin/nft"
        cp "$BOARD_ETHTOOL" "$stage/root/usr/sbin/ethtool"
        cp "$BOARD_IPTABLES" "$stage/root/usr/sbin/xtables-legacy-multi"
        local n
        for n in iptables iptables-restore iptables-save ip6tables ip6tables-restore ip6tables-save; do
            ln -s xtables-legacy-multi "$stage/root/usr/sbin/$n"
        done
        # nft's and iptables' static glibc read names from these (NSS files).
        local f
        for f in /etc/protocols /etc/services; do
            [ ! -f "$f" ] || cp "$f" "$stage/root/etc/"
        done
    else
        cp "$BOARD_ROOT/bin/busybox" "$stage/root/bin/busybox"
    fi
    if [ "$(id -u)" = 0 ]; then
        mknod -m 600 "$stage/root/dev/console" c 5 1
    fi
    board_write_init "$stage/root/init"
    local p
    for p in "${board_mod_order[@]}"; do
        mkdir -p "$stage/root/lib/modules/$kv/$(dirname "$p")"
        cp "$BOARD_MODDIR/$p" "$stage/root/lib/modules/$kv/$p"
    done
    : >"$stage/root/etc/board/modules.load"
    for p in "${load_order[@]}"; do
        printf '%s %s\n' "$p" "${load_params[$(board_mod_norm "$p")]:-}" >>"$stage/root/etc/board/modules.load"
    done
    # Filtered modules.dep / modules.alias so busybox modprobe works in the
    # guest for the included modules (and for kernel request_module).
    if [ ${#board_mod_order[@]} -gt 0 ]; then
        printf '%s\n' "${board_mod_order[@]}" >"$stage/included"
        awk -F: 'NR == FNR { inc[$1] = 1; next } ($1 in inc)' \
            "$stage/included" "$BOARD_MODDIR/modules.dep" >"$stage/root/lib/modules/$kv/modules.dep"
        awk 'NR == FNR { n = $0; sub(/.*\//, "", n); sub(/\.ko$/, "", n); gsub(/-/, "_", n); inc[n] = 1; next }
             ($1 == "alias" && ($3 in inc))' \
            "$stage/included" "$BOARD_MODDIR/modules.alias" >"$stage/root/lib/modules/$kv/modules.alias"
    else
        : >"$stage/root/lib/modules/$kv/modules.dep"
    fi
    # What is built in, as a Debian system has it (nasboot's SQM asks it
    # whether fq_codel is there). The built boards have no module tree.
    [ ! -f "${BOARD_MODDIR:-}/modules.builtin" ] || cp "$BOARD_MODDIR/modules.builtin" "$stage/root/lib/modules/$kv/"
    [ -z "$bin" ] || install -m 755 "$bin" "$stage/root/usr/sbin/nasboot"
    [ -z "$exec_init" ] || printf '%s\n' "$exec_init" >"$stage/root/etc/board/exec-init"
    [ -z "$profile" ] || install -m 644 "$profile" "$stage/root/etc/nasboot.toml"
    [ -z "$script" ] || install -m 755 "$script" "$stage/root/board/script"
    local f src dest
    for f in "${files[@]}"; do
        src=${f%%:*}
        dest=${f#*:}
        case $dest in /*) ;; *) board_usage_error "--file SRC:DEST needs an absolute DEST" ;; esac
        [ -f "$src" ] || board_die "no such file: $src"
        mkdir -p "$stage/root$(dirname "$dest")"
        cp -p "$src" "$stage/root$dest"
    done
}

# The disk image (created when missing) and its qemu arguments. The IDE
# controller that if=ide,index=0 lands on: malta the PIIX4 (ata_piix:
# mipsel's module, mips-be's built-in driver), g3beige the Heathrow MacIO
# IDE (pata_macio), sun4u the CMD646 on pciA (pata_cmd64x); the built
# boards' kernels have it and ext4 built in (board/*/kernel.config).
# An image a reset left unclean is checked first, as a boot would
# (board_disk_check).
board_run_disk() {
    if [ -n "$disk" ]; then
        if [ -f "$disk" ]; then
            board_disk_check "$disk"
        else
            board_disk_new "$disk" "$disk_size"
        fi
        : >"$stage/root/etc/board/disk"
        [ "$disk_mount" = 0 ] || : >"$stage/root/etc/board/disk-mount"
        qemu_disk=(-drive "file=$disk,format=raw,if=ide,index=0,media=disk")
        # QEMU's block throttling: without iops-size every request is one
        # I/O whatever its size, as on a disk that pays per command.
        [ -z "$disk_throttle" ] || qemu_disk[1]+=",throttling.iops-total=${disk_throttle%%:*},throttling.bps-total=${disk_throttle#*:}"
    fi
}

# The NICs' qemu arguments, in order (eth0, eth1...).
board_run_nics() {
    local n i=0 model backend dev fwd_done=0 netdev mac h slot
    if [ ${#nics[@]} = 0 ]; then
        qemu_net=(-nic none)
    fi
    for n in "${nics[@]}"; do
        model=${n%%:*}
        backend=user
        [ "$model" = "$n" ] || backend=${n#*:}
        dev=$(board_nic_device "$model")
        mac=$(printf '52:54:00:12:34:%02x' $((0x56 + i)))
        # PCI slot: malta's firmware routes slots 18 and 19 to the same
        # interrupt (10) and 20 and 21 to another (11); two NICs sharing
        # one stall under forwarding load (transmit queue timed out), so
        # the second NIC goes to slot 20. Slots stay in NIC order (eth0,
        # eth1... follow the bus). sun4u: the Simba bridge pciB, the only
        # bus with free slots (pciA's are the on-board devices'); eth0,
        # eth1... follow the kernel's driver link order there (e1000
        # before hme), not the order of --nic. Other machines: QEMU's own
        # placement.
        slot=''
        case $BOARD_NAME in
            mipsel | mips-be) slot=$(printf ',addr=0x%x' $((i == 0 ? 0x12 : 0x13 + i))) ;;
            sparc64) slot=',bus=pciB' ;;
        esac
        case $backend in
            user)
                netdev="user,id=net$i,restrict=on,net=10.0.2.0/24"
                if [ "$fwd_done" = 0 ]; then
                    for h in "${hostfwds[@]}"; do netdev+=",hostfwd=$h"; done
                    fwd_done=1
                fi
                qemu_net+=(-netdev "$netdev" -device "$dev,netdev=net$i,mac=$mac$slot,romfile=")
                ;;
            tap:?*)
                qemu_net+=(-netdev "tap,id=net$i,ifname=${backend#tap:},script=no,downscript=no"
                    -device "$dev,netdev=net$i,mac=$mac$slot,romfile=")
                ;;
            none)
                qemu_net+=(-device "$dev,mac=$mac$slot,romfile=")
                ;;
            *) board_usage_error "--nic MODEL[:user|:tap:IFNAME|:none] (got '$n')" ;;
        esac
        i=$((i + 1))
    done
    # NICs without a backend only: no -netdev at all, so QEMU would add
    # malta's default pcnet on top of them.
    case " ${qemu_net[*]} " in *" -netdev "*) ;; *) qemu_net=(-nic none "${qemu_net[@]}") ;; esac
    if [ ${#hostfwds[@]} -gt 0 ] && [ "$fwd_done" = 0 ]; then
        board_usage_error "--hostfwd needs a --nic with the user backend"
    fi
}

# The initramfs, then one boot under timeout: sets qrc and wall.
board_run_boot() {
    local initrd=$stage/initrd.gz kernel
    (cd "$stage/root" && find . -print | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
        gzip -1 >"$initrd" || board_die "initramfs build failed"

    local -a board_machine=()
    board_machine_args
    if [ "$BOARD_KIND" = built ]; then
        kernel=$BOARD_KERNEL
        board_firmware_check
    else
        kernel=$BOARD_ROOT/boot/vmlinuz-$BOARD_KVER
        board_machine+=(-nographic)
    fi
    local -a qemu=("$BOARD_QEMU" "${board_machine[@]}" -m "$mem" -no-reboot
        -kernel "$kernel" -initrd "$initrd"
        -append "console=$BOARD_CONSOLE rdinit=/init panic=1${append:+ $append}"
        -serial "file:$log" -monitor none
        "${qemu_disk[@]}" "${qemu_net[@]}" "${qemu_extra[@]}")

    : >"$log"
    local tail_pid=''
    if [ "$verbose" = 1 ]; then
        tail -n +1 -F "$log" 2>/dev/null >&2 &
        tail_pid=$!
    fi
    board_say "booting (timeout ${timeout}s, log $log)"
    local t0 t1
    t0=$(date +%s.%N)
    timeout -k 5 "$timeout" "${qemu[@]}" </dev/null >"$stage/qemu.out" 2>&1 &
    local qpid=$!
    if [ "$boot_timeout" -gt 0 ]; then
        # A boot that has not reached /init in --boot-timeout seconds is
        # stopped: outcome noboot, the console log kept.
        local waited=0
        while kill -0 "$qpid" 2>/dev/null; do
            if grep -q 'board: init up' "$log"; then
                init_wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
                break
            fi
            if [ "$waited" -ge $((boot_timeout * 5)) ]; then
                noboot=1
                kill "$qpid" 2>/dev/null || true
                break
            fi
            sleep 0.2
            waited=$((waited + 1))
        done
    fi
    wait "$qpid" || qrc=$?
    t1=$(date +%s.%N)
    if [ -n "$tail_pid" ]; then
        sleep 0.3
        kill "$tail_pid" 2>/dev/null || true
        wait "$tail_pid" 2>/dev/null || true
    fi
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
}

# The outcome from the serial log: sets outcome and script_exit; writes
# --result.
board_run_outcome() {
    script_exit=$(sed -n 's/^board: script-exit=\([0-9]*\).*/\1/p' "$log" | tail -n1)
    if [ "$noboot" = 1 ]; then
        outcome=noboot
        sed 's/^/qemu: /' "$stage/qemu.out" >&2
        board_say "--board $BOARD_NAME did not reach /init within ${boot_timeout}s (--boot-timeout); console log kept: $log"
    elif [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
        outcome=timeout
    elif ! grep -q -E "$BOARD_KERNEL_MARK" "$log"; then
        sed 's/^/qemu: /' "$stage/qemu.out" >&2
        board_die "no kernel output in $log (qemu status $qrc)"
    elif [ "$qrc" != 0 ]; then
        sed 's/^/qemu: /' "$stage/qemu.out" >&2
        board_die "qemu exited with status $qrc"
    elif grep -q 'reboot: Power down' "$log"; then
        outcome=poweroff
    elif grep -q 'Kernel panic' "$log"; then
        outcome=panic
    else
        outcome=reset
    fi
    local why=''
    case $outcome in
        reset) why=$(grep -o -m1 -E 'softdog: Initiating system reboot|reboot: Restarting system|watchdog[^\r]*reboot' "$log" || true) ;;
        panic) why=$(grep -m1 'Kernel panic' "$log" | tr -d '\r' || true) ;;
    esac
    # A disk that did not mount: said, naming the board (the script then
    # ran without /data; the suites that use it check the mount line).
    if [ -n "$disk" ] && [ "$disk_mount" = 1 ] && grep -q 'board: init up' "$log" &&
        ! grep -q 'board: disk mounted at /data' "$log"; then
        local said
        said=$(grep -m1 'board: disk' "$log" | tr -d '\r')
        board_say "--board $BOARD_NAME: --disk $disk was not mounted on /data (${said:-no word from /init})"
    fi
    board_say "outcome=$outcome${script_exit:+ script_exit=$script_exit} wall=${wall}s${init_wall:+ init=${init_wall}s}${why:+ ($why)}"
    if [ -n "$result" ]; then
        printf 'outcome=%s\nscript_exit=%s\nwall_s=%s\ninit_wall_s=%s\nlog=%s\n' "$outcome" "$script_exit" "$wall" "$init_wall" "$log" >"$result"
    fi
    [ "$keep" = 0 ] || board_say "staging kept in $stage"
}

# The exit status: the outcome's, then --expect, --expect-log and
# --reject-log: sets rc.
board_run_status() {
    case $outcome in
        poweroff)
            rc=$BOARD_RC_POWEROFF
            if [ -n "$script_exit" ] && [ "$script_exit" != 0 ]; then rc=$BOARD_RC_SCRIPT_FAILED; fi
            ;;
        reset) rc=$BOARD_RC_RESET ;;
        panic) rc=$BOARD_RC_PANIC ;;
        timeout) rc=$BOARD_RC_TIMEOUT ;;
        noboot) rc=$BOARD_RC_NOBOOT ;;
    esac
    if [ -n "$expect" ]; then
        if [ "$outcome" = "$expect" ] && [ "$rc" != "$BOARD_RC_SCRIPT_FAILED" ]; then
            rc=0
        else
            board_say "expected outcome $expect, got $outcome"
            [ "$rc" != 0 ] || rc=$BOARD_RC_LOG
        fi
    fi
    local re
    for re in "${expect_logs[@]}"; do
        if ! grep -q -E -e "$re" "$log"; then
            board_say "log lacks /$re/"
            [ "$rc" != 0 ] || rc=$BOARD_RC_LOG
        fi
    done
    for re in "${reject_logs[@]}"; do
        if grep -q -E -e "$re" "$log"; then
            board_say "log has unwanted /$re/"
            [ "$rc" != 0 ] || rc=$BOARD_RC_LOG
        fi
    done
}
