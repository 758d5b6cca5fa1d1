#!/bin/bash
# The scripts run inside the sandbox are single-quoted on purpose.
# shellcheck disable=SC2016 source-path=SCRIPTDIR
# Every profile `check` accepts must load. GEN_COUNT (default 300) profiles
# from tests/apply/genprofiles.py (seed GEN_SEED, default 1; every key of
# the schema, some draws invalid on purpose). For each:
#
#   - `check` accepts it (exit 0) or refuses it with exit 2 and a
#     FILE:LINE:COLUMN: KEY: error; anything else fails;
#   - accepted: `firewall apply --backend nftables` by nasboot itself through
#     netlink, with no nft on its PATH, and by the nft tool (`--loader
#     nft`), each in one of twin namespaces holding the same interfaces:
#     both exit alike and `nft list ruleset` is identical (the listing
#     prints what the kernel holds, so the batch means what the text
#     does; the generator has no flowtable, which this kernel lacks);
#   - accepted: `firewall render` for nftables loads with the real `nft -f`,
#     for iptables the IPv4 half with `iptables-restore --noflush` and the
#     IPv6 half with `ip6tables-restore --noflush`, in a network namespace
#     (nbrlg) that holds every interface the generator names (veth);
#   - its /etc/exports (from `plan --root`) passes the real `exportfs -ra`
#     with no complaint, in a private mount namespace whose /etc is an
#     overlay and /srv a tmpfs holding the export paths (the machine's
#     exports are never touched);
#   - with [samba], served through each server (`backend` set to "smbd",
#     then "ksmbd", in a copy): its Samba include passes `testparm -s`
#     (loaded, no unknown or invalid parameter), and its ksmbd.conf is
#     parsed by Debian's ksmbd.mountd (tests/nfs/ksmbd-lib.sh), which loads
#     every share it names and the users (alice, bob) ksmbd.adduser
#     provisioned in the sandbox's ksmbdpwd.db;
#   - every tenth (named eth0 = WAN, eth1 = LAN by the generator), the
#     nftables rule set loaded in a board-shaped namespace (prefix nbrl,
#     scripts/lib/netns.sh): a WAN TCP port the profile opens accepts a
#     connection from the WAN host, port 2223 (opened by none) does not.
# Not covered: UDP in the probe, [watchdog] keys (the generator leaves
# them out: they need a device), the board's kernel (the namespaces use
# the host's). About 3 minutes for 300 (nasboot, nft, testparm and ksmbd.mountd each a
# process).
#
#   tests/apply/generated.sh            # uses $NASBOOT_DIST or target/dist
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib.sh
. "$TOP/tests/lib.sh"
# shellcheck source=scripts/lib/netns.sh
. "$TOP/scripts/lib/netns.sh"
# shellcheck source=tests/firewall/lib.sh
. "$TOP/tests/firewall/lib.sh"
# shellcheck source=tests/nfs/ksmbd-lib.sh
. "$TOP/tests/nfs/ksmbd-lib.sh"

fw_packages
t_need nfs-kernel-server samba-common-bin util-linux ksmbd-tools coreutils

host_nasboot
COUNT=${GEN_COUNT:-300}
SEED=${GEN_SEED:-1}
P=nbrl
NS=nbrlg

W=$(mktemp -d /tmp/nasboot-gen.XXXXXX)
chmod 755 "$W"
cleanup() {
	fw_board_down "$P"
	ip netns del "$NS" 2>/dev/null || true
	ip netns del "${NS}p" 2>/dev/null || true
	ip netns del "${NS}n" 2>/dev/null || true
	ip netns del "${NS}q" 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

/usr/bin/python3 "$TOP/tests/apply/genprofiles.py" "$SEED" "$COUNT" "$W/p"

# The namespace the tool loads in, and its twin (nbrlgn) for nasboot's own
# loader: the same interfaces, each a veth whose peer is in nbrlgp/nbrlgq.
for ns in "$NS:${NS}p:nbrlg" "${NS}n:${NS}q:nbrln"; do
	IFS=: read -r main peers pre <<<"$ns"
	ip netns add "$main"
	ip netns add "$peers"
	ip -n "$main" link set lo up
	i=0
	for name in eth0 eth1 eth2 lan0 wan0 br-x; do
		i=$((i + 1))
		ip link add "$pre$i" type veth peer name "${pre}p$i"
		ip link set "$pre$i" netns "$main"
		ip -n "$main" link set "$pre$i" name "$name" up
		ip link set "${pre}p$i" netns "$peers"
	done
done
in_ns() { ip netns exec "$NS" "$@"; }
in_twin() { ip netns exec "${NS}n" "$@"; }
NONFT=$(t_path_without_nft "$W/nonft")

accepted=0 refused=0 nft_ok=0 ipt_ok=0 exp_files=0 smb_files=0 ksmbd_files=0 probed=0 same=0
bad_status="" bad_nft="" bad_ipt="" bad_smb="" bad_ksmbd="" bad_diff=""
mkdir -p "$W/root/etc/ksmbd" "$W/exports" "$W/smb" "$W/ksmbd"
# The generator's SMB users, provisioned as an operator does.
printf '[global]\n' >"$W/ksmbd/users.conf"
for u in alice bob; do
	ksmbd.adduser -a "$u" -p "pw-$u" -i "$W/root/etc/ksmbd/ksmbdpwd.db" -c "$W/ksmbd/users.conf" >/dev/null 2>&1
done
for f in "$W"/p/*.toml; do
	n=${f##*/}
	n=${n%.toml}
	set +e
	"${NB[@]}" -q check -c "$f" >/dev/null 2>"$W/p/$n.err"
	st=$?
	set -e
	case $st in
	0) accepted=$((accepted + 1)) ;;
	2)
		if grep -q "^nasboot: $f:[1-9][0-9]*:[1-9][0-9]*: [^ ]*: " "$W/p/$n.err"; then
			refused=$((refused + 1))
		else
			bad_status+=" $n(no location)"
		fi
		continue
		;;
	*)
		bad_status+=" $n(exit $st)"
		continue
		;;
	esac
	# nftables, loaded by nasboot through netlink and by nft: the same.
	in_ns nft flush ruleset
	in_twin nft flush ruleset
	set +e
	in_ns "${NB[@]}" -q -c "$f" firewall apply --backend nftables --loader nft >"$W/p/$n.tool" 2>&1
	st_tool=$?
	in_twin env PATH="$NONFT" "${NB[@]}" -c "$f" firewall apply --backend nftables >"$W/p/$n.native" 2>&1
	st_native=$?
	set -e
	in_ns nft list ruleset >"$W/p/$n.tool.list"
	in_twin nft list ruleset >"$W/p/$n.native.list"
	if [ "$st_tool" != "$st_native" ]; then
		bad_diff+=" $n(exit $st_tool/$st_native)"
	elif ! cmp -s "$W/p/$n.tool.list" "$W/p/$n.native.list"; then
		bad_diff+=" $n(listing)"
	elif [ "$st_native" = 0 ] && ! grep -Eq 'through netlink|nothing to change' "$W/p/$n.native" && [ -s "$W/p/$n.native.list" ]; then
		bad_diff+=" $n(not through netlink)"
	else
		same=$((same + 1))
	fi
	# nftables, loaded for real.
	if "${NB[@]}" -q -c "$f" firewall render --backend nftables >"$W/p/$n.nft" 2>"$W/p/$n.nft.err" &&
		in_ns nft -f "$W/p/$n.nft" 2>"$W/p/$n.nft.load"; then
		nft_ok=$((nft_ok + 1))
	else
		bad_nft+=" $n"
	fi
	# iptables: the two halves, split at the IPv6 file's header comment.
	if "${NB[@]}" -q -c "$f" firewall render --backend iptables >"$W/p/$n.ipt" 2>"$W/p/$n.ipt.err"; then
		awk -v a="$W/p/$n.v4" -v b="$W/p/$n.v6" '/^# .*ip6tables-restore/ { six = 1 } { print > (six ? b : a) }' "$W/p/$n.ipt"
		if [ ! -s "$W/p/$n.ipt" ] && grep -qx 'profile off' "$W/p/$n.want"; then
			ipt_ok=$((ipt_ok + 1)) # "off" on iptables: nothing to load
		elif in_ns iptables-restore --noflush <"$W/p/$n.v4" 2>"$W/p/$n.v4.load" &&
			in_ns ip6tables-restore --noflush <"$W/p/$n.v6" 2>"$W/p/$n.v6.load"; then
			ipt_ok=$((ipt_ok + 1))
		else
			bad_ipt+=" $n"
		fi
	else
		bad_ipt+=" $n(render)"
	fi
	# The files `plan` would write, from an empty --root.
	# (--root relocates the profile too.)
	cp "$f" "$W/root/etc/nasboot.toml"
	in_ns "${NB[@]}" --root "$W/root" plan >"$W/p/$n.plan" 2>/dev/null || true
	awk -v out="$W/exports/$n" -v smb="$W/smb/$n.conf" '
		/^--- / { file = ""; if ($2 == "/etc/exports") file = out; else if ($2 == "/etc/samba/nasboot.conf") file = smb; next }
		file != "" { print > file }' "$W/p/$n.plan"
	[ -f "$W/exports/$n" ] && exp_files=$((exp_files + 1))
	# SMB through each server: the profile with `backend` set.
	rm -f "$W/smb/$n.conf"
	if grep -q '^\[samba\]' "$f"; then
		for server in smbd ksmbd; do
			sed '/^\[samba\]/,/^\[/ s/^backend = .*/backend = "'"$server"'"/' "$f" >"$W/root/etc/nasboot.toml"
			in_ns "${NB[@]}" --root "$W/root" plan >"$W/p/$n.$server.plan" 2>/dev/null || true
			awk -v smb="$W/smb/$n.conf" -v ksmbd="$W/ksmbd/$n.conf" '
				/^--- / { file = ""; if ($2 == "/etc/samba/nasboot.conf") file = smb; else if ($2 == "/etc/ksmbd/ksmbd.conf") file = ksmbd; next }
				file != "" { print > file }' "$W/p/$n.$server.plan"
		done
		if [ ! -f "$W/smb/$n.conf" ]; then bad_smb+=" $n(not rendered)"; fi
		if [ -f "$W/ksmbd/$n.conf" ]; then
			ksmbd_files=$((ksmbd_files + 1))
			want=$(sed -n 's/^\[\(.*\)\]$/\1/p' "$W/ksmbd/$n.conf" | grep -vx global | sort -u | xargs)
			users=$(sed -n 's/^\tvalid users = //p' "$W/ksmbd/$n.conf" | tr ' ' '\n' | grep -v '^$' | sort -u | xargs)
			if ! ksmbd_parse "$W/ksmbd/$n.conf" "$W/root/etc/ksmbd/ksmbdpwd.db" "$W/ksmbd/$n.log"; then
				bad_ksmbd+=" $n(parse)"
			elif [ "$(ksmbd_shares "$W/ksmbd/$n.log" | xargs)" != "$want" ]; then
				bad_ksmbd+=" $n(shares)"
			elif [ -n "$users" ] && [ "$(ksmbd_users "$W/ksmbd/$n.log" | grep -vx nobody | xargs)" != "alice bob" ]; then
				bad_ksmbd+=" $n(users)"
			fi
		else
			bad_ksmbd+=" $n(not rendered)"
		fi
	fi
	if [ -f "$W/smb/$n.conf" ]; then
		smb_files=$((smb_files + 1))
		printf '[global]\n   include = %s\n' "$W/smb/$n.conf" >"$W/smb/$n.wrap"
		if testparm -s "$W/smb/$n.wrap" >/dev/null 2>"$W/smb/$n.err" && grep -q "Loaded services file OK." "$W/smb/$n.err" &&
			! grep -Eiq 'unknown parameter|invalid|error' "$W/smb/$n.err"; then :; else
			bad_smb+=" $n"
		fi
	fi
done
t_check "generated: every profile accepted (exit 0) or refused with exit 2 at FILE:LINE:COLUMN: KEY" test -z "$bad_status"
[ -z "$bad_status" ] || echo "    bad: $bad_status"
echo "    $COUNT generated (seed $SEED): $accepted accepted, $refused refused"
if [ "$accepted" -ge $((COUNT / 4)) ]; then t_ok "generated: $accepted of $COUNT accepted"; else t_fail "generated: only $accepted of $COUNT accepted"; fi
t_eq "generated: every accepted nftables rule set loads with nft ($nft_ok)" "" "$bad_nft"
t_eq "generated: nasboot's netlink batch and nft load the same rules for every accepted profile ($same)" "" "$bad_diff"
for n in $bad_diff; do
	n=${n%(*}
	diff "$W/p/$n.tool.list" "$W/p/$n.native.list" | head -8 | sed "s/^/    $n: /"
	tail -2 "$W/p/$n.native" | sed "s/^/    $n native: /"
done
if [ "$same" -ge $((accepted / 2)) ]; then t_ok "generated: $same profiles loaded both ways"; else t_fail "generated: only $same profiles loaded both ways"; fi
t_eq "generated: every accepted iptables rule set loads with iptables-restore and ip6tables-restore ($ipt_ok)" "" "$bad_ipt"
t_eq "generated: every Samba include passes testparm ($smb_files)" "" "$bad_smb"
t_eq "generated: every ksmbd.conf is parsed by ksmbd.mountd, every share and user loaded ($ksmbd_files)" "" "$bad_ksmbd"
if [ "$ksmbd_files" -eq "$smb_files" ] && [ "$smb_files" -ge $((COUNT / 10)) ]; then t_ok "generated: $smb_files SMB profiles, each through smbd and ksmbd"; else t_fail "generated: $smb_files smbd includes, $ksmbd_files ksmbd.conf files"; fi
for n in $bad_ksmbd; do grep -m2 ERROR "$W/ksmbd/${n%(*}.log" 2>/dev/null | sed "s/^/    $n: /"; done
for n in $bad_nft; do head -3 "$W/p/$n.nft.load" | sed "s/^/    $n: /"; done
for n in $bad_ipt; do cat "$W/p/${n%(*}".v[46].load 2>/dev/null | head -3 | sed "s/^/    $n: /"; done

# exportfs, every export table in one sandbox: /etc an overlay, /srv a
# tmpfs with the paths, /var/lib/nfs and /proc/fs/nfsd scratch.
cat "$W"/p/*.toml | sed -n 's/^path = //p' | sort -u >"$W/paths"
unshare -m -- bash -c '
	set -eu
	W=$1
	mount --make-rprivate /
	mkdir -p "$W/fs"
	mount -t tmpfs -o size=16m nbrlgen "$W/fs"
	mkdir "$W/fs/upper" "$W/fs/work" "$W/fs/lib" "$W/fs/srv"
	mount -t overlay overlay -o "lowerdir=/etc,upperdir=$W/fs/upper,workdir=$W/fs/work" /etc
	mount --bind "$W/fs/lib" /var/lib/nfs
	mkdir -p /srv
	mount --bind "$W/fs/srv" /srv
	mkdir -p /proc/fs/nfsd 2>/dev/null || true
	mount -t tmpfs -o size=64k nbrlgnfsd /proc/fs/nfsd
	# The generator'"'"'s host names (host1..host9), resolvable.
	for i in 1 2 3 4 5 6 7 8 9; do echo "192.0.2.$i host$i" >>/etc/hosts; done
	/usr/bin/python3 -c "
import json, os, sys
for line in open(sys.argv[1]):
    os.makedirs(json.loads(line), exist_ok=True)
" "$W/paths"
	: >"$W/exportfs.bad"
	for e in "$W"/exports/*; do
		cp "$e" /etc/exports
		if ! exportfs -ra >"$e.out" 2>&1 || [ -s "$e.out" ]; then
			echo "${e##*/}" >>"$W/exportfs.bad"
		fi
	done
' sandbox "$W"
t_eq "generated: every export table passes exportfs -ra without a message ($exp_files)" "" "$(tr '\n' ' ' <"$W/exportfs.bad")"
while read -r n; do head -3 "$W/exports/$n.out" | sed "s/^/    $n: /"; done <"$W/exportfs.bad"

# The semantic probe on the tenth profiles: WAN port open or closed.
fw_board_up "$P"
box() { ip netns exec "${P}box" "$@"; }
connects() { ip netns exec "${P}wan" socat -u OPEN:/dev/null "TCP4:$NETNS_WAN_BOX:$1,connect-timeout=2" 2>/dev/null; }
probe_bad=""
for f in "$W"/p/*0.toml; do
	n=${f##*/}
	n=${n%.toml}
	[ -f "$W/p/$n.nft" ] || continue
	read -r _ kind <"$W/p/$n.want"
	[ "$kind" = off ] && continue
	open=$(sed -n 's/^tcp //p' "$W/p/$n.want" | tr ' ' '\n' | grep -vx '' | head -1 || true)
	box nft flush ruleset
	box nft -f "$W/p/$n.nft" || { probe_bad+=" $n(load)"; continue; }
	fw_listen "${P}box" -u TCP4-LISTEN:2223,fork,reuseaddr OPEN:/dev/null
	[ -n "$open" ] && fw_listen "${P}box" -u "TCP4-LISTEN:$open,fork,reuseaddr" OPEN:/dev/null
	sleep 0.2
	if connects 2223; then probe_bad+=" $n(2223 open)"; fi
	if [ -n "$open" ] && ! connects "$open"; then probe_bad+=" $n($open closed)"; fi
	fw_stop_listeners
	probed=$((probed + 1))
done
t_eq "generated: semantic probe on $probed profiles (a WAN port opened is open, one not is closed)" "" "$probe_bad"
if [ "$probed" -ge 3 ]; then t_ok "generated: $probed profiles probed"; else t_fail "generated: only $probed profiles probed"; fi
echo "    loaded: nft $nft_ok, iptables $ipt_ok; exports $exp_files; smb includes $smb_files; ksmbd.conf $ksmbd_files; probed $probed"
t_done
