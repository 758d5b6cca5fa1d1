#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Crash-consistent applies: every file `apply` writes under --root
# (/etc/exports, /etc/nfs.conf.d/nasboot.conf, /etc/default/nfs-kernel-server,
# /etc/samba/nasboot.conf) is replaced atomically (src/seam/real/files.rs).
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
#     and a `plan` after it has nothing to do). Half the runs slow every
#     fsync by 2 ms (strace fault injection), so that kills land inside
#     the write sequence and not only before or after it.
#
# Runs in private mount and network namespaces (unshare): the tmpfs mounts
# and any firewall tool nasboot asks stay off the machine. The profile's
# firewall is "off". About 40 s.
#
#   tests/apply/crash.sh            # uses $NASBOOT_DIST or target/dist
set -eu
# shellcheck source=../lib.sh
. "$(cd "$(dirname "$0")/.." && pwd)/lib.sh"

if [ -z "${NB_CRASH_NS:-}" ]; then
	t_need util-linux strace perl
	exec env NB_CRASH_NS=1 unshare -mn --propagation private bash "$0" "$@"
fi

read -ra NB <<<"$(nasboot_for host)"
if [ ! -x "${NB[0]}" ]; then
	echo "no nasboot binary at ${NB[0]}: run scripts/build host or set NASBOOT_DIST" >&2
	exit 1
fi
RUNS=${CRASH_RUNS:-200}
# The profile's LAN link, in this private network namespace.
ip link set lo up
ip link add eth1 type veth peer name nbcrash1

W=$(mktemp -d /tmp/nasboot-crash.XXXXXX)
trap 'st=$?; umount -R "$W"/mnt-* 2>/dev/null || true; rm -rf "$W"; exit $st' EXIT
cp "${NB[0]}" "$W/nasboot"
NB=("$W/nasboot")

FILES=(etc/exports etc/nfs.conf.d/nasboot.conf etc/default/nfs-kernel-server etc/samba/nasboot.conf)

cat >"$W/profile.toml" <<'TOML'
[board]
name = "crash"
[[interface]]
name = "eth1"
role = "lan"
[firewall]
profile = "off"
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
	printf '# old exports\n/srv/old 10.0.0.0/8(ro)\n' >"$r/etc/exports"
	printf '[nfsd]\nthreads=1\n' >"$r/etc/nfs.conf.d/nasboot.conf"
	printf 'RPCNFSDCOUNT=8\nRPCNFSDPRIORITY=0\nRPCMOUNTDOPTS="--manage-gids"\nNEED_SVCGSSD=""\n' >"$r/etc/default/nfs-kernel-server"
	printf '# old include\n[old]\npath = /srv/old\n' >"$r/etc/samba/nasboot.conf"
	printf '[global]\ninclude = /etc/samba/nasboot.conf\n' >"$r/etc/samba/smb.conf"
}
key() { echo "${1//\//_}"; }
same() { cmp -s "$1" "$2"; }

# The old texts, and the new ones from a clean apply on a roomy root.
REF=$W/ref
populate "$REF"
mkdir -p "$W/old" "$W/new"
for f in "${FILES[@]}"; do cp "$REF/$f" "$W/old/$(key "$f")"; done
set +e
"${NB[@]}" -q --root "$REF" apply >"$W/ref.out" 2>&1
st=$?
set -e
t_eq "a clean apply under --root exits 0" 0 "$st"
for f in "${FILES[@]}"; do
	cp "$REF/$f" "$W/new/$(key "$f")"
	if same "$W/old/$(key "$f")" "$W/new/$(key "$f")"; then t_fail "set-up: the apply leaves $f as it was"; fi
done
t_has "a plan after it has nothing to do" "nothing to do" "$("${NB[@]}" --root "$REF" plan 2>&1)"

# intact ROOT DESC: every file its old text, no temporary file left.
intact() {
	local f bad="" left
	for f in "${FILES[@]}"; do
		same "$1/$f" "$W/old/$(key "$f")" || bad+=" $f"
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
t_check "missing /etc/samba: the include is written" same "$r/etc/samba/nasboot.conf" "$W/new/$(key etc/samba/nasboot.conf)"
umount "$r"

# kill -9 at random points.
r=$W/mnt-kill
mkdir -p "$r"
mount -t tmpfs -o size=8m nbcrash "$r"
# The apply's duration, to spread the kills over it (and a little after).
populate "$r"
t0=$(date +%s%N)
"${NB[@]}" -q --root "$r" apply >/dev/null 2>&1 || true
plain_us=$((($(date +%s%N) - t0) / 1000))
RANDOM=20
killed=0 finished=0 partial=0 mixed=0 diverged=0
for run in $(seq 1 "$RUNS"); do
	rm -rf "${r:?}"/*
	populate "$r"
	if [ $((run % 2)) -eq 0 ]; then
		cmd=(strace -f -qq -o /dev/null -e trace=fsync -e inject=fsync:delay_enter=2000 "${NB[@]}" -q --root "$r" apply)
		span=$((plain_us * 4 + 20000))
	else
		cmd=("${NB[@]}" -q --root "$r" apply)
		span=$((plain_us * 2))
	fi
	delay=$(((RANDOM * 32768 + RANDOM) % span))
	# perl: sub-millisecond sleeps; kill -9 the whole process group
	# (strace and nasboot alike), then reap it.
	if perl -e 'use POSIX; my $d = shift; my $pid = fork // die;
		if (!$pid) { setpgid(0, 0); exec @ARGV or die "exec: $!" }
		select(undef, undef, undef, $d / 1e6);
		my $alive = waitpid($pid, WNOHANG) == 0;
		kill "KILL", -$pid; waitpid($pid, 0); exit($alive ? 0 : 1)' "$delay" "${cmd[@]}" >/dev/null 2>&1; then
		killed=$((killed + 1))
	else
		finished=$((finished + 1))
	fi
	states=""
	for f in "${FILES[@]}"; do
		if same "$r/$f" "$W/old/$(key "$f")"; then states+=o
		elif same "$r/$f" "$W/new/$(key "$f")"; then states+=n
		else
			states+=X
			partial=$((partial + 1))
			cp "$r/$f" "$W/partial-$run-$(key "$f")" 2>/dev/null || true
		fi
	done
	case $states in *o*n* | *n*o*) mixed=$((mixed + 1)) ;; esac
	"${NB[@]}" -q --root "$r" apply >/dev/null 2>&1 || true
	for f in "${FILES[@]}"; do
		same "$r/$f" "$W/new/$(key "$f")" || { diverged=$((diverged + 1)); break; }
	done
done
umount "$r"
echo "    kill -9: $RUNS runs, $killed killed while running, $finished had finished; $mixed stopped between files; apply ${plain_us} us unslowed"
t_eq "kill -9 in $RUNS runs: no file partial (neither old nor new)" 0 "$partial"
t_eq "kill -9 in $RUNS runs: the next apply converged every time" 0 "$diverged"
if [ "$killed" -ge $((RUNS / 4)) ]; then t_ok "kill -9: $killed of $RUNS kills landed while apply ran"; else t_fail "kill -9: only $killed of $RUNS kills landed while apply ran"; fi
if [ "$mixed" -ge 1 ]; then t_ok "kill -9: $mixed runs stopped between two files (the kills land inside the sequence)"; else t_fail "kill -9: no run stopped between two files"; fi
t_done
