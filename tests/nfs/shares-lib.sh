# shellcheck shell=bash disable=SC2154,SC2034 # work, lb_ns: set by lb_setup; LB_*: read by lanboard.sh
# The WAN side of the shares board suites (tests/nfs/board-shares.sh,
# board-smbd.sh), sourced after tests/lanboard.sh (before lb_setup): a WAN
# namespace whose veth is bridged to eth0's tap (the tap must live where
# QEMU runs, the LAN namespace), routing the LAN subnet through the
# board as a WAN neighbour may; and port probes from either side.
# The profile is tests/profiles/board-shares.toml; eth0 the WAN on tap1,
# eth1 the LAN on tap0.

LB_PROFILE=$T_TOP/tests/profiles/board-shares.toml
LB_NICS=(e1000:tap:tap1 e1000:tap:tap0)

# sh_wan_setup: the namespace $wan_ns (203.0.113.1/24 on wan0), removed
# on exit with the LAN's; probe.py in $work.
sh_wan_setup() {
	wan_ns=lb-shwan-$$
	trap 'lb_cleanup; ip netns del "$wan_ns" 2>/dev/null || true' EXIT
	ip netns add "$wan_ns"
	ip -n "$wan_ns" link set lo up
	ip -n "$lb_ns" link add br1 type bridge
	ip netns exec "$lb_ns" ip tuntap add dev tap1 mode tap
	ip -n "$lb_ns" link add wanv type veth peer name wan0 netns "$wan_ns"
	ip -n "$lb_ns" link set tap1 master br1
	ip -n "$lb_ns" link set wanv master br1
	local l
	for l in br1 tap1 wanv; do ip -n "$lb_ns" link set "$l" up; done
	ip -n "$wan_ns" addr add 203.0.113.1/24 dev wan0
	ip -n "$wan_ns" link set wan0 up
	ip -n "$wan_ns" route add 192.168.77.0/24 via 203.0.113.2
	# probe PROTO HOST PORT [SOURCE-PORT]: "open", "refused" or "timeout"
	# for a TCP connect; "reply", "refused" or "timeout" for an RPC NULL
	# call to the portmapper over UDP.
	cat >"$work/probe.py" <<'PY'
import socket, struct, sys
proto, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
sport = int(sys.argv[4]) if len(sys.argv) > 4 else 0
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if proto == "tcp" else socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", sport))
s.settimeout(4)
try:
    s.connect((host, port))
    if proto == "udp":
        # xid, CALL, RPC 2, portmapper 100000 v2, NULL; AUTH_NONE twice
        s.send(struct.pack(">10I", 0x6e62, 0, 2, 100000, 2, 0, 0, 0, 0, 0))
        s.recv(512)
        print("reply")
    else:
        print("open")
except ConnectionRefusedError:
    print("refused")
except (socket.timeout, TimeoutError):
    print("timeout")
PY
}

# wan ARGS / lan ARGS: probe.py from the WAN or the LAN namespace.
wan() { ip netns exec "$wan_ns" python3 "$work/probe.py" "$@"; }
lan() { lb_client python3 "$work/probe.py" "$@"; }

# probe_bg NAME wan|lan ARGS...: that probe in the background, its answer
# in $work/probe-NAME; probe_wait: wait for those started. A probe of a
# dropped port waits out its whole timeout, so the suites start those
# together (each its own socket and source port) and check the answers
# in their order after.
probe_pids=()
probe_bg() {
	local name=$1
	shift
	"$@" >"$work/probe-$name" 2>&1 &
	probe_pids+=("$!")
}
probe_wait() {
	local pid
	for pid in "${probe_pids[@]}"; do wait "$pid" || true; done
	probe_pids=()
}

# sh_disk_image SIZE-KIB IMG: an ext4 image around one file `big` of
# random data; prints its sha256.
sh_disk_image() {
	mkdir -p "$work/fill"
	head -c $(($1 * 1024)) /dev/urandom >"$work/fill/big"
	sha256sum <"$work/fill/big" | cut -d' ' -f1
	mkfs.ext4 -q -F -b 4096 -d "$work/fill" -L sda "$2" $(($1 / 1024 + 20))M >&2
	rm -rf "$work/fill"
}
