# shellcheck shell=bash
# The harness's self-test and its HTTP helper (scripts/board smoke, http-get).
# Part of scripts/lib/board.sh, which sources it.

board_smoke() {
    local dir=$BOARD_REPO/tests/board
    local out=$BOARD_CACHE/smoke
    local fails=0
    mkdir -p "$out"
    board_ensure_ready
    board_smoke_case() {
        local label=$1
        shift
        if (board_run "$@"); then
            board_say "SMOKE PASS $label"
        else
            board_say "SMOKE FAIL $label (rc $?)"
            fails=$((fails + 1))
        fi
    }
    board_smoke_case "poweroff" --script "$dir/poweroff.sh" --expect poweroff \
        --log "$out/poweroff.log" --timeout 90 --expect-log 'board: script-exit=0'
    board_smoke_case "softdog reset" --module 'softdog soft_margin=5' --script "$dir/softdog-reset.sh" \
        --expect reset --log "$out/reset.log" --timeout 120 \
        --expect-log 'softdog: Initiating system reboot' --reject-log 'board: script-exit='
    board_smoke_case "magic close" --module 'softdog soft_margin=5' --script "$dir/softdog-magic-close.sh" \
        --expect poweroff --log "$out/magic.log" --timeout 120 --reject-log 'Initiating system reboot'
    local img=$out/persist.img
    rm -f "$img"
    board_smoke_case "disk boot 1" --disk "$img" --script "$dir/disk-count.sh" --expect poweroff \
        --log "$out/disk1.log" --timeout 120 --expect-log 'boots=1([^0-9]|$)'
    board_smoke_case "disk boot 2" --disk "$img" --script "$dir/disk-count.sh" --expect poweroff \
        --log "$out/disk2.log" --timeout 120 --expect-log 'boots=2([^0-9]|$)'
    board_smoke_case "disk boot 3, reset" --disk "$img" --module 'softdog soft_margin=5' \
        --file "$dir/disk-count.sh:/board/disk-count.sh" \
        --script "$dir/disk-count-reset.sh" --expect reset --log "$out/disk3.log" --timeout 120 \
        --expect-log 'boots=3([^0-9]|$)' --expect-log 'softdog: Initiating system reboot'
    board_smoke_case "disk boot 4 after reset" --disk "$img" --script "$dir/disk-count.sh" \
        --expect poweroff --log "$out/disk4.log" --timeout 120 --expect-log 'boots=4([^0-9]|$)'
    if [ "$(board_disk_cmd cat "$img" /boots | tr -d '\n')" = 4 ]; then
        board_say "SMOKE PASS disk readable on host (boots=4)"
    else
        board_say "SMOKE FAIL disk readable on host"
        fails=$((fails + 1))
    fi
    local model
    for model in e1000 pcnet; do
        board_smoke_net "$model" "" "$out" || fails=$((fails + 1))
    done
    board_smoke_netns e1000 "$out" || fails=$((fails + 1))
    board_say "smoke: $fails failure(s); logs in $out"
    [ "$fails" = 0 ]
}

board_free_port() {
    local p
    for p in $(seq 18080 18180); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    board_die "no free port"
}

# Boot with a NIC and busybox httpd in the guest (tests/board/net-httpd.sh);
# fetch a page from the host, then ask for /stop so the guest powers off.
# NETNS empty: user backend with hostfwd 127.0.0.1:PORT -> guest :80.
# NETNS set: the caller made a tap device tap0 in that netns (192.168.77.1/24)
# and the harness runs inside it; the guest is 192.168.77.2.
board_smoke_net() {
    local model=$1 netns=$2 out=$3 dir=$BOARD_REPO/tests/board
    local label log rc=0 host port
    local -a pre=() args=()
    if [ -z "$netns" ]; then
        label="$model user+hostfwd"
        log=$out/net-$model-user.log
        host=127.0.0.1
        port=$(board_free_port)
        args=(--nic "$model" --hostfwd "tcp:127.0.0.1:$port-:80")
    else
        label="$model tap in netns"
        log=$out/net-$model-tap.log
        host=192.168.77.2
        port=80
        pre=(ip netns exec "$netns")
        args=(--nic "$model:tap:tap0" --append "board.ip=192.168.77.2/24")
    fi
    : >"$log"
    "${pre[@]}" "$BOARD_REPO/scripts/board" run "${args[@]}" --script "$dir/net-httpd.sh" \
        --expect poweroff --log "$log" --timeout 180 \
        --expect-log "eth0 driver=$(board_nic_driver "$model")" &
    local pid=$! body=''
    for _ in $(seq 1 150); do
        grep -q 'board: httpd up' "$log" 2>/dev/null && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 1
    done
    body=$("${pre[@]}" "$BOARD_REPO/scripts/board" http-get "$host" "$port" /hello.txt) || true
    "${pre[@]}" "$BOARD_REPO/scripts/board" http-get "$host" "$port" /stop >/dev/null 2>&1 || true
    wait "$pid" || rc=$?
    if [ "$rc" = 0 ] && [ "$body" = "hello from board" ]; then
        board_say "SMOKE PASS nic $label (host got '$body' from $host:$port)"
        return 0
    fi
    board_say "SMOKE FAIL nic $label (rc $rc, body '$body', log $log)"
    return 1
}

board_smoke_netns() {
    local model=$1 out=$2 ns=board-smoke-$$ rc=0
    ip netns add "$ns" || board_die "ip netns add failed"
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$ns" ip tuntap add dev tap0 mode tap
    ip netns exec "$ns" ip addr add 192.168.77.1/24 dev tap0
    ip netns exec "$ns" ip link set tap0 up
    board_smoke_net "$model" "$ns" "$out" || rc=1
    ip netns del "$ns" || true
    return "$rc"
}

# http-get HOST PORT PATH: print the body (bash /dev/tcp; no curl needed).
# Retries while the guest's slirp/tap link comes up.
board_http_get() {
    [ $# = 3 ] || board_usage_error "http-get HOST PORT PATH"
    local host=$1 port=$2 path=$3 line try
    for try in $(seq 1 20); do
        if exec 3<>"/dev/tcp/$host/$port"; then
            break
        fi 2>/dev/null
        [ "$try" = 20 ] && return 1
        sleep 1
    done
    printf 'GET %s HTTP/1.0\r\nHost: board\r\n\r\n' "$path" >&3
    local in_body=0 body=''
    while IFS= read -r -t 30 line <&3; do
        line=${line%$'\r'}
        if [ "$in_body" = 1 ]; then
            body+=$line
        elif [ -z "$line" ]; then
            in_body=1
        fi
    done
    exec 3<&-
    printf '%s\n' "$body"
}
