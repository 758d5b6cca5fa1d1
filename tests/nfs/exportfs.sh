#!/bin/bash
# The scripts run inside the sandbox are single-quoted on purpose.
# shellcheck disable=SC2016 source-path=SCRIPTDIR
# nasboot's export table through the REAL exportfs (Debian nfs-kernel-server).
#
# Every scenario runs in a private mount and network namespace where /etc
# is an overlay whose writes land in a scratch tmpfs, /var/lib/nfs is a
# scratch directory and /proc/fs/nfsd is a scratch tmpfs holding fake nfsd
# control files; /proc/meminfo and the online CPU list are those of a
# 64 MB single-core board. The machine's own /etc/exports, etab and nfsd
# are never touched. Needs root (unshare, mount).
#
# Checked: a profile through `nasboot apply` and `exportfs -ra`, with
# `exportfs -v` showing each export with the intended options; exports.d,
# and exportfs' own file:line error surfaced; a full /etc (ENOSPC) and an
# unwritable one (EACCES) keep the old file; bad input writes nothing and
# names the key; exports.d on a board without /etc/exports.
#
#   tests/nfs/exportfs.sh            # uses $NASBOOT_DIST or target/dist
set -eu
# shellcheck source=../lib.sh
. "$(cd "$(dirname "$0")/.." && pwd)/lib.sh"

t_need nfs-kernel-server util-linux

host_nasboot

W=$(mktemp -d /tmp/nasboot-nfs.XXXXXX)
trap 'rm -rf "$W"' EXIT
chmod 755 "$W"
SRV=$W/srv
mkdir -p "$SRV/plain" "$SRV/My Music" "$SRV/odd \"#(x),\\q" "$SRV/v6"
# A 64 MB single-core board, as /proc/meminfo and sysfs show it.
printf 'MemTotal:          61412 kB\nMemFree:           20000 kB\n' >"$W/meminfo"
printf '0\n' >"$W/cpu-online"

# The nasboot binary, reachable from inside the sandbox.
cp "${NB[0]}" "$W/nasboot"
NB[0]=$W/nasboot

# sandbox DIR SIZE SCRIPT: run the bash SCRIPT in the sandbox; DIR holds the
# scratch tmpfs (SIZE) and the outputs; SCRIPT sees $D (= DIR) and $NB.
sandbox() {
	local dir=$1 size=$2 script=$3
	mkdir -p "$dir/fs"
	unshare -m -n -- bash -c '
		set -eu
		D=$1 SIZE=$2 NB=$3 SCRIPT=$4
		mount --make-rprivate /
		mount -t tmpfs -o "size=$SIZE" nasboot-test "$D/fs"
		mkdir "$D/fs/upper" "$D/fs/work" "$D/fs/lib" "$D/fs/nfsd"
		mount -t overlay overlay -o "lowerdir=/etc,upperdir=$D/fs/upper,workdir=$D/fs/work" /etc
		mount --bind "$D/fs/lib" /var/lib/nfs
		mkdir -p /proc/fs/nfsd 2>/dev/null || true
		mount -t tmpfs -o size=64k nasboot-nfsd /proc/fs/nfsd
		mount --bind "$D/../meminfo" /proc/meminfo
		mount --bind "$D/../cpu-online" /sys/devices/system/cpu/online
		# A stopped nfsd as the kernel shows it.
		echo 0 >/proc/fs/nfsd/threads
		: >/proc/fs/nfsd/portlist
		echo "-2 +3 +4 +4.1 +4.2" >/proc/fs/nfsd/versions
		echo 8192 >/proc/fs/nfsd/max_block_size
		export D NB
		bash -c "$SCRIPT"
	' sandbox "$dir" "$size" "${NB[*]}" "$script"
}

# --- 1. a profile through nasboot apply and exportfs -ra ---------------------
S1=$W/s1
mkdir -p "$S1"
cat >"$S1/p.toml" <<EOF
[board]
name = "exportfs-test"
[firewall]
profile = "off"
[nfs]
preset = "slow-cpu"
max_block_size = 16384
[[nfs.export]]
path = "$SRV/plain"
clients = ["192.168.10.0/24", "*.lan"]
[[nfs.export]]
path = "$SRV/My Music"
clients = ["*"]
rw = true
squash = "all"
anonuid = 1000
anongid = 100
secure = false
subtree_check = true
[[nfs.export]]
path = '$SRV/odd "#(x),\\q'
clients = ["fd00:10::/64", "fd00:10::7"]
fsid = 7
crossmnt = true
no_wdelay = true
squash = "none"
EOF
sandbox "$S1" 1m '
	set +e
	$NB -c "$D/p.toml" apply >"$D/apply.out" 2>"$D/apply.err"
	echo $? >"$D/apply.rc"
	$NB -c "$D/p.toml" apply >"$D/again.out" 2>"$D/again.err"
	echo $? >"$D/again.rc"
	$NB -c "$D/p.toml" plan >"$D/plan.out" 2>&1
	cp /etc/exports "$D/exports"
	exportfs -v >"$D/v.out" 2>&1
	cp /var/lib/nfs/etab "$D/etab"
	cp /etc/default/nfs-kernel-server "$D/default"
	nfsconf --get nfsd threads >"$D/threads" 2>&1
	nfsconf --get nfsd vers4 >"$D/vers4" 2>&1
	nfsconf --get mountd port >"$D/mountd-port" 2>&1
	# One write() at offset 0, as into the kernel file: read the first line.
	for k in versions max_block_size threads; do head -n1 "/proc/fs/nfsd/$k"; done >"$D/nfsd"
'
t_eq "apply exits 0" 0 "$(cat "$S1/apply.rc")"
t_has "the export table was written and loaded" "applied" "$(cat "$S1/apply.out")"
t_eq "re-apply exits 0" 0 "$(cat "$S1/again.rc")"
# (The firewall, "off" here, may still plan its open rule set.)
t_check "re-plan: no NFS action left" bash -c "! grep -E '^ *[0-9]+\. storage' '$S1/plan.out'"
t_check "re-plan: the sandbox plan is readable" grep -q "nasboot plan for board exportfs-test" "$S1/plan.out"
t_has "the slow-cpu sizing is reported" "nfsd: 2 thread(s)" "$(cat "$S1/apply.err")"
V=$(cat "$S1/v.out")
ETAB=$(cat "$S1/etab")
t_has "exportfs -v shows the LAN export" "$SRV/plain
		192.168.10.0/24(sync,wdelay,hide,no_subtree_check,sec=sys,ro,root_squash,no_all_squash)" "$V"
t_has "exportfs -v shows the wildcard client" "*.lan(sync,wdelay,hide,no_subtree_check,sec=sys,ro,root_squash,no_all_squash)" "$V"
t_has "the path with a space reads back" "$SRV/My Music
		<world>(sync,wdelay,hide,anonuid=1000,anongid=100,sec=sys,rw,root_squash,all_squash)" "$V"
t_has "the odd path reads back byte for byte" "$SRV/odd \"#(x),\\q
		fd00:10::/64(sync,no_wdelay,hide,crossmnt,no_subtree_check,fsid=7,sec=sys,ro,no_root_squash,no_all_squash)" "$V"
t_has "an IPv6 host client" "fd00:10::7(sync,no_wdelay,hide,crossmnt,no_subtree_check,fsid=7" "$V"
t_has "etab: secure and root_squash on the LAN export" "192.168.10.0/24(ro,sync,wdelay,hide,nocrossmnt,secure,root_squash,no_all_squash,no_subtree_check" "$ETAB"
t_has "etab: insecure and subtree_check where asked" "*(rw,sync,wdelay,hide,nocrossmnt,insecure,root_squash,all_squash,subtree_check" "$ETAB"
t_eq "five client lines in etab" 5 "$(wc -l <"$S1/etab")"
t_has "RPCNFSDCOUNT follows the sizing" "RPCNFSDCOUNT=2" "$(cat "$S1/default")"
t_has "RPCMOUNTDOPTS pins mountd's port" 'RPCMOUNTDOPTS="--manage-gids --port 32767"' "$(cat "$S1/default")"
t_has "Debian's other settings stay" "RPCNFSDPRIORITY=0" "$(cat "$S1/default")"
t_eq "nfs.conf (through the drop-in): threads" 2 "$(cat "$S1/threads")"
t_eq "nfs.conf: NFSv4 off (slow-cpu)" n "$(cat "$S1/vers4")"
t_eq "nfs.conf: mountd port" 32767 "$(cat "$S1/mountd-port")"
t_eq "stopped nfsd: versions, max_block_size written, threads left to the init script" "+3 -4
16384
0" "$(cat "$S1/nfsd")"

# --- 2. exports.d, and exportfs' file:line error surfaced --------------------
S2=$W/s2
mkdir -p "$S2"
cat >"$S2/p.toml" <<EOF
[board]
name = "exportfs-test"
[firewall]
profile = "off"
[nfs]
exports_d = true
[[nfs.export]]
path = "$SRV/v6"
clients = ["fd00:10::/64"]
EOF
sandbox "$S2" 1m '
	# The board owner'"'"'s own table, with a mistake on line 2 (no
	# comments: exportfs does not count comment lines).
	printf "%s\n" "/srv good-host(ro,sync,no_subtree_check)" "/srv bogus-host(ro,bogus)" >/etc/exports
	set +e
	$NB -c "$D/p.toml" apply >"$D/apply.out" 2>"$D/apply.err"
	echo $? >"$D/apply.rc"
	cp /etc/exports.d/nasboot.exports "$D/dropin"
	cp /etc/exports "$D/exports"
	exportfs -v >"$D/v.out" 2>&1
'
t_eq "exportfs failing makes apply partial (3)" 3 "$(cat "$S2/apply.rc")"
t_has "nasboot reports exportfs' file and line" "nasboot: exportfs: /etc/exports:2: unknown keyword \"bogus\"" "$(cat "$S2/apply.err")"
t_has "the drop-in was written" "$SRV/v6 fd00:10::/64(ro,sync,root_squash,secure,no_subtree_check)" "$(cat "$S2/dropin")"
t_eq "the owner's /etc/exports is untouched" "/srv good-host(ro,sync,no_subtree_check)
/srv bogus-host(ro,bogus)" "$(cat "$S2/exports")"
t_has "exportfs still loaded the drop-in" "$SRV/v6
		fd00:10::/64(sync,wdelay,hide,no_subtree_check,sec=sys,ro,root_squash,no_all_squash)" "$(cat "$S2/v.out")"

# --- 3. ENOSPC: a full tmpfs under /etc -------------------------------------
S3=$W/s3
mkdir -p "$S3"
cp "$S1/p.toml" "$S3/p.toml"
sandbox "$S3" 256k '
	printf "/old *(ro,sync,no_subtree_check)\n" >/etc/exports
	dd if=/dev/zero of="$D/fs/filler" bs=4k 2>/dev/null || true
	set +e
	$NB -c "$D/p.toml" apply >"$D/apply.out" 2>"$D/apply.err"
	echo $? >"$D/apply.rc"
	cp /etc/exports "$D/exports"
	ls /etc >"$D/ls"
	ls /var/lib/nfs >"$D/lib"
'
t_eq "ENOSPC: apply fails (1)" 1 "$(cat "$S3/apply.rc")"
t_has "ENOSPC: the error names the file and the cause" "nasboot: /etc/exports: cannot write: No space left on device" "$(cat "$S3/apply.err")"
t_eq "ENOSPC: the old table is intact" "/old *(ro,sync,no_subtree_check)" "$(cat "$S3/exports")"
t_check "ENOSPC: no temporary file is left" bash -c "! grep -q nasboot-tmp '$S3/ls'"
t_check "ENOSPC: exportfs did not run (no etab)" bash -c "! grep -q etab '$S3/lib'"

# --- 4. EACCES: not allowed to write /etc ------------------------------------
S4=$W/s4
mkdir -p "$S4/root/etc" "$S4/root/srv/plain"
printf '/old *(ro,sync,no_subtree_check)\n' >"$S4/root/etc/exports"
# --root relocates the profile too.
printf '[board]\nname = "t"\n[firewall]\nprofile = "off"\n[[nfs.export]]\npath = "/srv/plain"\nclients = ["10.0.0.0/8"]\n' >"$S4/root/p.toml"
chmod 755 "$S4" "$S4/root" "$S4/root/etc"
chmod 644 "$S4/root/p.toml" "$S4/root/etc/exports"
sandbox "$S4" 1m '
	set +e
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
		$NB --root "$D/root" -c /p.toml apply >"$D/apply.out" 2>"$D/apply.err"
	echo $? >"$D/apply.rc"
	ls /var/lib/nfs >"$D/lib"
'
t_eq "EACCES: apply fails (1)" 1 "$(cat "$S4/apply.rc")"
t_has "EACCES: the error names the file and the cause" "nasboot: /etc/exports: cannot write: Permission denied" "$(cat "$S4/apply.err")"
t_eq "EACCES: the old table is intact" "/old *(ro,sync,no_subtree_check)" "$(cat "$S4/root/etc/exports")"
t_check "EACCES: exportfs did not run (no etab)" bash -c "! grep -q etab '$S4/lib'"

# --- 5. bad input: nothing written, the named key ----------------------------
S5=$W/s5
mkdir -p "$S5"
printf '[board]\nname = "t"\n[firewall]\nprofile = "off"\n[[nfs.export]]\npath = "%s"\nclients = ["10.0.0.0/33"]\n' "$SRV/plain" >"$S5/p.toml"
printf '[board]\nname = "t"\n[firewall]\nprofile = "off"\n[[nfs.export]]\npath = "%s/none"\nclients = ["10.0.0.0/8"]\n' "$SRV" >"$S5/missing.toml"
sandbox "$S5" 1m '
	printf "/old *(ro,sync,no_subtree_check)\n" >/etc/exports
	set +e
	$NB -c "$D/p.toml" apply >/dev/null 2>"$D/bad.err"; echo $? >"$D/bad.rc"
	$NB --strict -c "$D/missing.toml" apply >/dev/null 2>"$D/strict.err"; echo $? >"$D/strict.rc"
	cp /etc/exports "$D/exports"
	ls /var/lib/nfs >"$D/lib"
'
t_eq "/33: exit 2" 2 "$(cat "$S5/bad.rc")"
t_has "/33: file, line, column and key" "$S5/p.toml:7:12: nfs.export[0].clients[0]: prefix /33 is out of range" "$(cat "$S5/bad.err")"
t_eq "missing path under --strict: exit 2" 2 "$(cat "$S5/strict.rc")"
t_has "missing path: the key" "$S5/missing.toml:6:8: nfs.export[0].path: $SRV/none does not exist on this board" "$(cat "$S5/strict.err")"
t_eq "bad input: the old table is intact" "/old *(ro,sync,no_subtree_check)" "$(cat "$S5/exports")"
t_check "bad input: exportfs did not run" bash -c "! grep -q etab '$S5/lib'"

# --- 6. exports.d on a board without /etc/exports -------------------------------
S6=$W/s6
mkdir -p "$S6"
cp "$S2/p.toml" "$S6/p.toml"
sandbox "$S6" 1m '
	rm -f /etc/exports
	set +e
	$NB -c "$D/p.toml" apply >"$D/apply.out" 2>"$D/apply.err"
	echo $? >"$D/apply.rc"
	cp /etc/exports "$D/exports"
	exportfs -v >"$D/v.out" 2>&1
'
t_eq "no /etc/exports: apply exits 0" 0 "$(cat "$S6/apply.rc")"
t_has "no /etc/exports: a commented one is created" "# The board's own exports." "$(cat "$S6/exports")"
t_has "no /etc/exports: the drop-in is loaded" "$SRV/v6" "$(cat "$S6/v.out")"

t_check "the machine's own /etc/exports was not touched" test ! -e /etc/exports.nasboot-tmp
t_done
