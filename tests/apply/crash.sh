#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Crash-consistent applies: every file `apply` writes under --root
# (/etc/exports, /etc/nfs.conf.d/nasboot.conf, /etc/default/nfs-kernel-server,
# /etc/samba/nasboot.conf) is replaced atomically (src/seam/real/files.rs),
# and nasboot's nftables table is replaced in one nf_tables batch.
#
#  1. the root a tmpfs that is full or read-only: the old files are intact
#     byte for byte, no temporary file is left, the error names the path,
#     and the exit status is 1 ("failure", src/exit.rs); each file is
#     tried and each failure named ("PATH: cannot write: No space left on
#     device (os error 28); the previous file is unchanged"). A directory
#     missing is created (exit 0).
#  2. `kill -9` of `apply` at random points, CRASH_RUNS times (default
#     200): every file is then exactly its old or its new text, never
#     partial, and the next apply converges (its files are the new texts
#     and a `plan` after it has nothing to do but the firewall's load,
#     which every apply does). Half the runs slow every fsync by 2 ms
#     (strace fault injection), so that kills land inside the write
#     sequence and not only before or after it.
#     The runs take turns with two profiles that differ in their rule set
#     only (the LAN's services, or the LAN open to everything), so that
#     before a run nasboot's table (`inet nasboot`) is absent, the other
#     rule set's, or the same rule set's. After the kill, `nft list table
#     inet nasboot` shows it absent only if it was absent before, and
#     otherwise exactly as before or as the new rule set: never deleted
#     without its replacement, never partly loaded. Some kills must land
#     before the table's load and some after it; the next apply exits 0.
#     How many kills land between two files depends on the machine's
#     load; the suite fails on any partial file or table.
#
# The reset history (/var/lib/nasboot/resets) and the firewall's
# /run/nasboot/firewall.previous go through the same replace (unit tests
# in src/seam/real/files.rs); this suite does not kill `run`.
#
# Runs in private mount and network namespaces (unshare): the tmpfs mounts
# and the rule sets stay off the machine. nasboot loads the rule sets
# itself, through netlink (the native path of the host binary), with no
# nft on its PATH (t_path_without_nft); an apply and a plan say "through
# netlink". The suite lists the table with nft. About 40 s.
#
#   tests/apply/crash.sh            # uses $NASBOOT_DIST or target/dist
set -eu
# shellcheck source=../lib.sh
. "$(cd "$(dirname "$0")/.." && pwd)/lib.sh"

if [ -z "${NB_CRASH_NS:-}" ]; then
	t_need util-linux strace perl nftables
	exec env NB_CRASH_NS=1 unshare -mn --propagation private bash "$0" "$@"
fi

host_nasboot
RUNS=${CRASH_RUNS:-200}
# The profile's LAN link, in this private network namespace.
ip link set lo up
ip link add eth1 type veth peer name nbcrash1

W=$(mktemp -d /tmp/nasboot-crash.XXXXXX)
trap 'st=$?; umount -R "$W"/mnt-* 2>/dev/null || true; rm -rf "$W"; exit $st' EXIT
cp "${NB[0]}" "$W/nasboot"
NONFT=$(t_path_without_nft "$W/nonft")
NB=(env PATH="$NONFT" "$W/nasboot")

FILES=(etc/exports etc/nfs.conf.d/nasboot.conf etc/default/nfs-kernel-server etc/samba/nasboot.conf)

cat >"$W/profile.toml" <<'TOML'
[board]
name = "crash"
[[interface]]
name = "eth1"
role = "lan"
[firewall]
hook = "input"
lan_services = ["nfs", "smb"]
[nfs]
threads = 4
versions = ["3"]
[[nfs.export]]
path = "/srv/nfs/media library"
clients = ["192.168.10.0/24", "fd00:10::/64"]
rw = true
[[nfs.export]]
path = "/srv/nfs/backup"
clients = ["192.168.10.5"]
[samba]
backend = "smbd"
workgroup = "WORKGROUP"
[[samba.share]]
name = "media"
path = "/srv/nfs/media library"
TOML

# populate ROOT: the profile and the old copies of every file.
populate() {
	local r=$1
	mkdir -p "$r/etc/nfs.conf.d" "$r/etc/default" "$r/etc/samba" "$r/srv/nfs/media library" "$r/srv/nfs/backup"
	cp "$W/profile.toml" "$r/etc/nasboot.toml"
	ln -sfn /proc "$r/proc"
	printf '# old exports\n/srv/old 10.0.0.0/8(ro)\n' >"$r/etc/exports"
	printf '[nfsd]\nthreads=1\n' >"$r/etc/nfs.conf.d/nasboot.conf"
	printf 'RPCNFSDCOUNT=8\nRPCNFSDPRIORITY=0\nRPCMOUNTDOPTS="--manage-gids"\nNEED_SVCGSSD=""\n' >"$r/etc/default/nfs-kernel-server"
	printf '# old include\n[old]\npath = /srv/old\n' >"$r/etc/samba/nasboot.conf"
	printf '[global]\ninclude = /etc/samba/nasboot.conf\n' >"$r/etc/samba/smb.conf"
}
# same A B: the two files hold the same text. Read by the shell itself: the
# kill loop compares some 2,000 times, and a process for each (cmp) cost
# seconds. A NUL byte (read stops at it) counts as different: the texts
# have none.
same() {
	local a b
	[ -f "$1" ] && [ -f "$2" ] || return 1
	! IFS= read -r -d '' a <"$1" || return 1
	! IFS= read -r -d '' b <"$2" || return 1
	[ "$a" = "$b" ]
}

# The old texts, and the new ones from a clean apply on a roomy root.
REF=$W/ref
populate "$REF"
mkdir -p "$W/old" "$W/new"
(cd "$REF" && cp --parents "${FILES[@]}" "$W/old/")
set +e
"${NB[@]}" -v --root "$REF" apply >"$W/ref.out" 2>&1
st=$?
set -e
t_eq "a clean apply under --root exits 0" 0 "$st"
t_has "it loads the firewall $(t_native_or_tool host), with no nft on its PATH" "lines) $(t_native_or_tool host)" "$(cat "$W/ref.out")"
(cd "$REF" && cp --parents "${FILES[@]}" "$W/new/")
for f in "${FILES[@]}"; do
	if same "$W/old/$f" "$W/new/$f"; then t_fail "set-up: the apply leaves $f as it was"; fi
done
# settled ROOT: a plan has nothing to do (the rule set nasboot loaded is
# still loaded as it was, so not even the firewall's load).
settled() {
	local out
	out=$("${NB[@]}" --root "$1" plan 2>&1) || return 1
	[[ $out == *"nothing to do: the board matches the profile"* ]] && ! grep -qE '^ +[0-9]+\. ' <<<"$out"
}
t_check "a plan after it has nothing to do" settled "$REF"

# intact ROOT DESC: every file its old text, no temporary file left.
intact() {
	local f bad="" left
	for f in "${FILES[@]}"; do
		same "$1/$f" "$W/old/$f" || bad+=" $f"
	done
	if [ -n "$bad" ]; then t_fail "$2: changed:$bad"; else t_ok "$2: every old file intact"; fi
	left=$(find "$1" -name '*.nasboot-tmp' | wc -l)
	t_eq "$2: no temporary file left" 0 "$left"
}

# fault NAME SETUP WHY: apply on a 1 MiB tmpfs root after SETUP ROOT; the
# status is 1, each file's error names its path and WHY, the old files
# are intact.
fault() {
	local name=$1 setup=$2 r=$W/mnt-$1 st out
	mkdir -p "$r"
	mount -t tmpfs -o size=1m nbcrash "$r"
	populate "$r"
	"$setup" "$r"
	set +e
	out=$("${NB[@]}" --root "$r" apply 2>&1)
	st=$?
	set -e
	t_eq "$name: apply exits 1" 1 "$st"
	local f
	for f in "${FILES[@]}"; do
		t_has "$name: the error names /$f" "/$f: cannot write: $3" "$out"
	done
	intact "$r" "$name"
	printf '%s\n' "$out" | grep -m1 "cannot write" | sed "s|^|    $name: |" || true
	umount "$r"
}
full() { # every block and then every byte taken
	dd if=/dev/zero of="$1/filler" bs=64k 2>/dev/null || true
	dd if=/dev/zero of="$1/filler2" bs=1 2>/dev/null || true
}
read_only() { mount -o remount,ro "$1"; }
fault full full "No space left on device (os error 28); the previous file is unchanged"
fault read-only read_only "Read-only file system (os error 30); the previous file is unchanged"

# A directory missing (a board without /etc/samba yet) is created.
r=$W/mnt-nodir
mkdir -p "$r"
mount -t tmpfs -o size=1m nbcrash "$r"
populate "$r"
rm -rf "$r/etc/samba"
t_check "missing /etc/samba: apply exits 0" "${NB[@]}" -q --root "$r" apply
t_check "missing /etc/samba: the include is written" same "$r/etc/samba/nasboot.conf" "$W/new/etc/samba/nasboot.conf"
umount "$r"

# kill -9 at random points.
r=$W/mnt-kill
mkdir -p "$r"
mount -t tmpfs -o size=8m nbcrash "$r"
# Two profiles that differ in their rule set only (the files are the same):
# the profile's (LAN services) and one with the LAN open to everything.
# Their tables' listings: the first as the reference apply left it.
sed '/^lan_services = /d' "$W/profile.toml" >"$W/open.toml"
fw_list() { nft list table inet nasboot 2>/dev/null || echo absent; }
FW_SERVICES=$(fw_list)
populate "$W/open"
cp "$W/open.toml" "$W/open/etc/nasboot.toml"
"${NB[@]}" -q --root "$W/open" firewall apply
FW_OPEN=$(fw_list)
if [ "$FW_SERVICES" = absent ] || [ "$FW_OPEN" = absent ] || [ "$FW_SERVICES" = "$FW_OPEN" ]; then
	t_fail "set-up: the two rule sets did not load, or are the same"
fi
# The apply's duration, to spread the kills over it (and as long again
# after), taken with a firewall that has nothing to do: replacing the
# table adds a load before the files and, after the last one, 10-15 ms in
# which closing the netlink socket waits for the kernel to free the old
# table. Spread over those too, few kills would land among the files.
nft delete table inet nasboot
populate "$r"
sed 's/^hook = .*/profile = "off"/' "$W/open.toml" >"$r/etc/nasboot.toml"
t0=$(date +%s%N)
"${NB[@]}" -q --root "$r" apply >/dev/null 2>&1 || true
plain_us=$((($(date +%s%N) - t0) / 1000))
RANDOM=20
killed=0 finished=0 partial=0 mixed=0 diverged=0 fw_bad=0 fw_kept=0 fw_replaced=0
for run in $(seq 1 "$RUNS"); do
	rm -rf "${r:?}"/*
	populate "$r"
	# The table before and the rule set the apply loads, in turn: none ->
	# the profile's; the profile's -> the open one; the open one -> the
	# same again. The table before is the one the last run's converging
	# apply loaded, or none.
	case $((run % 3)) in
	1)
		nft delete table inet nasboot 2>/dev/null || true
		fw_before=absent fw_new=$FW_SERVICES
		;;
	2)
		cp "$W/open.toml" "$r/etc/nasboot.toml"
		fw_before=$FW_SERVICES fw_new=$FW_OPEN
		;;
	0)
		cp "$W/open.toml" "$r/etc/nasboot.toml"
		fw_before=$FW_OPEN fw_new=$FW_OPEN
		;;
	esac
	if [ $((run % 2)) -eq 0 ]; then
		cmd=(strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=2000 "${NB[@]}" -q --root "$r" apply)
		span=$((plain_us * 4 + 20000))
	else
		cmd=("${NB[@]}" -q --root "$r" apply)
		span=$((plain_us * 2))
	fi
	delay=$(((RANDOM * 32768 + RANDOM) % span))
	# perl: sub-millisecond sleeps; kill -9 the whole process group
	# (strace and nasboot alike), reap its leader, then wait (up to 2 s)
	# until no process of the group is left but zombies: under strace,
	# nasboot is not perl's child, and the state is read once the kernel
	# has finished whatever system call the kill found it in. (The group's
	# zombies, reparented to an init that may not reap them, stay.)
	if perl -e 'use POSIX; my $d = shift; my $pid = fork // die;
		if (!$pid) { setpgid(0, 0); exec @ARGV or die "exec: $!" }
		select(undef, undef, undef, $d / 1e6);
		my $alive = waitpid($pid, WNOHANG) == 0;
		kill "KILL", -$pid; waitpid($pid, 0);
		sub live { for my $f (glob "/proc/[0-9]*/stat") { open(my $h, "<", $f) or next;
			my $s = <$h> // next; return 1 if $s =~ /.*\) (\S) -?\d+ (\d+)/s && $2 == $_[0] && $1 ne "Z" } 0 }
		for (1 .. 2000) { last unless live($pid); select(undef, undef, undef, 0.001) }
		exit($alive ? 0 : 1)' "$delay" "${cmd[@]}" >"$W/run.out" 2>&1; then
		killed=$((killed + 1))
	else
		finished=$((finished + 1))
	fi
	states=""
	for f in "${FILES[@]}"; do
		if same "$r/$f" "$W/old/$f"; then states+=o
		elif same "$r/$f" "$W/new/$f"; then states+=n
		else
			states+=X
			partial=$((partial + 1))
			cp "$r/$f" "$W/partial-$run-${f//\//_}" 2>/dev/null || true
		fi
	done
	case $states in *o*n* | *n*o*) mixed=$((mixed + 1)) ;; esac
	fw_now=$(fw_list)
	if [ "$fw_now" = "$fw_new" ]; then
		[ "$fw_before" = "$fw_new" ] || fw_replaced=$((fw_replaced + 1))
	elif [ "$fw_now" = "$fw_before" ]; then
		fw_kept=$((fw_kept + 1))
	else
		fw_bad=$((fw_bad + 1))
		echo "    run $run: the table is neither as before nor the new rule set; against the new one:"
		diff <(printf '%s\n' "$fw_new") <(printf '%s\n' "$fw_now") | head -40 | sed 's/^/      /' || true
		echo "    what the killed apply printed:"
		sed 's/^/      /' "$W/run.out" || true
	fi
	# The next apply converges: exit 0 (the rule set loaded) and the new files.
	"${NB[@]}" -q --root "$r" apply >/dev/null 2>&1 || diverged=$((diverged + 1))
	for f in "${FILES[@]}"; do
		same "$r/$f" "$W/new/$f" || { diverged=$((diverged + 1)); break; }
	done
done
umount "$r"
[ "$(fw_list)" = "$fw_new" ] || diverged=$((diverged + 1))
echo "    kill -9: $RUNS runs, $killed killed while running, $finished had finished; $mixed stopped between files; apply ${plain_us} us unslowed (no table to replace)"
echo "    the table, where the apply changed it: still as before in $fw_kept runs, the new rule set in $fw_replaced"
t_eq "kill -9 in $RUNS runs: no file partial (neither old nor new)" 0 "$partial"
t_eq "kill -9 in $RUNS runs: nasboot's table absent only where it was before, else whole (as before or the new rule set)" 0 "$fw_bad"
t_eq "kill -9 in $RUNS runs: the next apply converged every time (files and table)" 0 "$diverged"
if [ "$fw_kept" -ge 1 ] && [ "$fw_replaced" -ge 1 ]; then t_ok "kill -9: kills landed before the table's load ($fw_kept) and after it ($fw_replaced)"; else t_fail "kill -9: kills before the table's load: $fw_kept, after it: $fw_replaced (want some of each)"; fi
if [ "$killed" -ge $((RUNS / 4)) ]; then t_ok "kill -9: $killed of $RUNS kills landed while apply ran"; else t_fail "kill -9: only $killed of $RUNS kills landed while apply ran"; fi
if [ "$mixed" -ge 1 ]; then t_ok "kill -9: $mixed runs stopped between two files (the kills land inside the sequence)"; else t_fail "kill -9: no run stopped between two files"; fi
t_done
