#!/usr/bin/env bash
# The OpenWrt procd script, board/init/openwrt/nasboot, and its UCI file,
# board/init/openwrt/nasboot.config. procd is not packaged anywhere CI can
# install from, so the script runs against a model of what the real procd,
# rc.common and functions.sh were observed to do
# (/work/shared/reference/nic-nfs-packaging.md, "procd, as observed"):
# - the script's functions run under BusyBox's sh (start_service,
#   reload_service, service_triggers) with rc.common's procd_* helpers,
#   rc_procd and functions.sh's config_load/config_get/config_get_bool
#   modelled; check, apply and lock-down call the real nasboot binary
#   (under a private --root, in a network namespace);
# - the procd side (procd_*, below, in this file) keeps the registered
#   instance and acts on each new registration as procd does: a new
#   instance is spawned; one whose command changed is restarted (SIGTERM,
#   a new process); one whose only change is a `file` checksum gets its
#   reload_signal (restarted without one); a registration without the
#   instance stops it; an identical one does nothing;
# - a reload trigger named X (procd_add_reload_trigger X) runs the
#   script's `reload` only on a config.change event for UCI package X,
#   which reload_config sends for each /etc/config file whose checksum
#   changed since the last one; `uci set`/`uci commit` edit the file;
# - respawn: a killed instance is started again once its delay (the
#   second value) has passed, at most retry (the third) times.
# What the model does not cover: ubus, JSON and procd's other instance
# parameters (env, limits, stdout/stderr, term_timeout's SIGKILL), the
# respawn threshold's failure counting (every death counts), triggers'
# debounce delay, events other than config.change, boot ordering by
# START, procd_lock. The daemon under the model is a stand-in that logs
# its start, SIGHUP and SIGTERM (the real daemon's handling of them is
# checked on the emulated board by board-init.sh and board-debian.sh).
# Negative controls: editing the TOML alone fires nothing; a config.change
# for another package fires nothing; reload_config with nothing changed
# and a start with nothing changed do nothing; a refused reload touches
# nothing; a disabled service is not respawned. Needs root.
# The hotplug handler (board/init/openwrt/nasboot.hotplug) re-applies the
# firewall on the real kernel when a device is added.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/lib.sh
. "$here/../lib.sh"
# shellcheck source=tests/pkg/sandbox.sh
. "$here/sandbox.sh"

sb_enter "$@"
sb_apt busybox-static shellcheck
bin=$(nasboot_bin)
if [ ! -x "$bin" ]; then
	t_fail "no host binary at $bin (run scripts/build host)"
	t_done
fi
script=$T_TOP/board/init/openwrt/nasboot
uci_file=$T_TOP/board/init/openwrt/nasboot.config
sb_setup nbowrt
busybox=$(command -v busybox)

t_eq "openwrt: first line hands over to rc.common" '#!/bin/sh /etc/rc.common' "$(head -n1 "$script")"
t_check "openwrt: shellcheck" shellcheck "$script"
t_check "openwrt: busybox sh -n" "$busybox" sh -n "$script"
t_has "openwrt: the UCI file has section main of type nasboot" "config nasboot 'main'" "$(cat "$uci_file")"
t_has "openwrt: UCI profile" "option profile '/etc/nasboot.toml'" "$(cat "$uci_file")"
t_has "openwrt: UCI enabled" "option enabled '1'" "$(cat "$uci_file")"
mkdir -p "$SB/root/etc/config"
cp "$uci_file" "$SB/root/etc/config/nasboot"
# Another package's UCI file, for the negative control.
printf "config interface 'lan'\n\toption proto 'static'\n" >"$SB/root/etc/config/network"

# The daemon under the model: a stand-in (see above); every other nasboot
# call is the real binary relocated under the sandbox root. The stand-in
# starts with SIGHUP and SIGTERM at their defaults: bash cannot trap a
# signal ignored at its start, as under nohup, which procd never does.
cat >"$SB/standin" <<EOF2
#!/usr/bin/env bash
log=$SB/daemon.log
echo "start \$\$ \$*" >>"\$log"
trap 'echo "HUP \$\$" >>"\$log"' HUP
trap 'echo "TERM \$\$" >>"\$log"; exit 0' TERM
while :; do sleep 0.1 & wait \$!; done
EOF2
cat >"$SB/nasboot" <<EOF2
#!/bin/sh
case "\$*" in
*" run") exec env --default-signal=HUP,TERM $SB/standin "\$@" ;;
esac
exec $bin --root $SB/root "\$@"
EOF2
chmod +x "$SB/nasboot" "$SB/standin"
: >"$SB/daemon.log"

cat >"$SB/functions.sh" <<'EOF2'
# functions.sh: config_load PACKAGE reads $ROOT/etc/config/PACKAGE (the
# subset of UCI's syntax the shipped file uses: config TYPE 'NAME',
# option KEY 'VALUE'); config_get VAR SECTION OPTION [DEFAULT];
# config_get_bool VAR SECTION OPTION [DEFAULT].
_uci=""
config_load() {
	_uci=""
	_sec=""
	while read -r _kw _a _b; do
		case $_kw in
		config) _sec=$(echo "$_b" | tr -d "'\"") ;;
		option) _uci="$_uci
$_sec.$_a=$(echo "$_b" | tr -d "'\"")" ;;
		esac
	done <"$ROOT/etc/config/$1"
}
config_get() {
	_v=$(printf '%s\n' "$_uci" | sed -n "s|^$2\.$3=||p" | tail -n1)
	[ -n "$_v" ] || _v=${4:-}
	eval "$1=\$_v"
}
config_get_bool() {
	config_get "$1" "$2" "$3" "${4:-0}"
	eval "_v=\$$1"
	case $_v in
	1 | on | true | yes | enabled) _v=1 ;;
	*) _v=0 ;;
	esac
	eval "$1=\$_v"
}
EOF2

cat >"$SB/harness" <<'EOF2'
# OpenWrt's shell side, modelled. Run as: busybox sh harness SCRIPT PROG ACTION
# (ACTION: start, reload, or a function of the script). Registrations go
# to $REG (what rc.common's procd_close_service would send to procd),
# logger and the script's other calls to $CALLS; /etc is under $ROOT.
rec() { printf '%s\n' "$*" >>"$CALLS"; }
reg() { printf '%s\n' "$*" >>"$REG"; }
logger() { rec logger "$@"; }
# rc.common: rc_procd FUNCTION registers the service with what FUNCTION
# declares (no instance declared: none).
rc_procd() {
	reg service
	"$@"
	_st=$?
	reg registered
	return $_st
}
procd_open_instance() { reg instance; }
procd_close_instance() { reg end; }
procd_set_param() {
	_k=$1
	shift
	case $_k in
	file)
		# procd checksums the file when the instance is registered.
		for _f in "$@"; do
			reg "file $_f $(md5sum "$ROOT$_f" 2>/dev/null | cut -d' ' -f1)"
		done
		;;
	*) reg "$_k $*" ;;
	esac
}
procd_add_reload_trigger() {
	for _p in "$@"; do printf 'config.change %s\n' "$_p" >>"$TRIGGERS"; done
}
procd_send_signal() { rec procd_send_signal "$@"; }
. "$FUNCTIONS"
. "$1"
rec "START=$START STOP=$STOP USE_PROCD=$USE_PROCD"
PROG=$2
case $3 in
start)
	# rc.common's start: the service with its instance, then its triggers.
	: >"$TRIGGERS"
	rc_procd start_service
	_st=$?
	service_triggers
	exit $_st
	;;
reload)
	# rc.common's reload: reload_service when the script has one.
	if type reload_service >/dev/null 2>&1; then reload_service; else rc_procd start_service; fi
	;;
*) "$3" ;;
esac
EOF2

# The procd side. State: $PD/cur (the registered instance), $PD/pid, the
# triggers, the UCI checksums reload_config compares with.
PD=$SB/procd
mkdir -p "$PD"
: >"$PD/triggers"
: >"$PD/actions"
# act WORDS: what procd did, for the checks.
act() { echo "$*" >>"$PD/actions"; }
inst_pid() { cat "$PD/pid" 2>/dev/null || echo none; }
inst_param() { sed -n "s/^$1 //p" "$PD/cur" 2>/dev/null; }
spawn() {
	local argv
	read -ra argv <<<"$(inst_param command)"
	"${argv[@]}" >/dev/null 2>&1 &
	disown "$!"
	echo $! >"$PD/pid"
	sb_track "$!"
	act "spawn $!"
	# The stand-in logs its start before the next event.
	sleep 0.3
}
kill_inst() {
	local pid
	pid=$(inst_pid)
	[ "$pid" != none ] || return 0
	kill -TERM "$pid" 2>/dev/null || true
	sb_wait_gone "$pid" || true
	rm -f "$PD/pid"
	act "term $pid"
}
# procd_update: take the registration in $PD/reg, if there was one.
procd_update() {
	local new=$PD/new
	grep -qx registered "$PD/reg" 2>/dev/null || return 0
	sed -n '/^instance$/,/^end$/p' "$PD/reg" >"$new"
	if [ ! -s "$new" ]; then
		kill_inst
		rm -f "$PD/cur"
		return 0
	fi
	if [ ! -f "$PD/cur" ] || [ "$(inst_pid)" = none ]; then
		mv "$new" "$PD/cur"
		spawn
	elif cmp -s <(grep -v '^file ' "$new") <(grep -v '^file ' "$PD/cur"); then
		if ! cmp -s "$new" "$PD/cur"; then
			mv "$new" "$PD/cur"
			local sig
			sig=$(inst_param reload_signal)
			if [ -n "$sig" ]; then
				kill "-$sig" "$(inst_pid)"
				act "signal $sig $(inst_pid)"
				sleep 0.3
			else
				kill_inst
				spawn
			fi
		fi
	else
		kill_inst
		mv "$new" "$PD/cur"
		spawn
	fi
	return 0
}
# initd ACTION: /etc/init.d/nasboot ACTION through rc.common and procd.
initd() {
	local st
	: >"$SB/calls"
	: >"$PD/reg"
	set +e
	ip netns exec "${SB_NS}box" env -i "CALLS=$SB/calls" "REG=$PD/reg" "TRIGGERS=$PD/triggers.new" "ROOT=$SB/root" "FUNCTIONS=$SB/functions.sh" \
		"$busybox" sh "$SB/harness" "$script" "$SB/nasboot" "$1" >/dev/null 2>&1
	st=$?
	set -e
	if [ "$1" = start ] && [ -f "$PD/triggers.new" ]; then mv "$PD/triggers.new" "$PD/triggers"; fi
	procd_update
	return "$st"
}
# procd_event TYPE PACKAGE: the triggers that match run `reload`.
procd_event() {
	if grep -qx "$1 $2" "$PD/triggers"; then
		act "trigger $1 $2"
		initd reload || true
	fi
}
# reload_config: config.change for each UCI file changed since last time.
config_sums() { (cd "$SB/root/etc/config" && md5sum -- *); }
config_sums >"$PD/config.md5"
reload_config() {
	local sum f
	while read -r sum f; do
		grep -qx "$sum  $f" "$PD/config.md5" || procd_event config.change "$f"
	done < <(config_sums)
	config_sums >"$PD/config.md5"
}
# uci_set OPTION VALUE: `uci set nasboot.main.OPTION=VALUE; uci commit nasboot`.
uci_set() {
	sed -i "s|^\([[:space:]]*option $1 \).*|\1'$2'|" "$SB/root/etc/config/nasboot"
}
# respawn_watch SECONDS: procd watching its instance for that long (the
# time of death and the respawns so far are kept across calls).
echo 0 >"$PD/tries"
respawn_watch() {
	local end=$((SECONDS + $1)) pid dead delay tries retry
	read -r _ delay retry <<<"$(inst_param respawn)"
	while [ "$SECONDS" -lt "$end" ]; do
		pid=$(inst_pid)
		if [ -f "$PD/cur" ] && [ "$pid" != none ] && ! sb_alive "$pid"; then
			[ -s "$PD/dead" ] || echo "$SECONDS" >"$PD/dead"
			dead=$(cat "$PD/dead")
			tries=$(cat "$PD/tries")
			if [ $((SECONDS - dead)) -ge "$delay" ] && [ "$tries" -lt "$retry" ]; then
				echo $((tries + 1)) >"$PD/tries"
				act "respawn after $((SECONDS - dead)) s"
				: >"$PD/dead"
				spawn
			fi
		fi
		sleep 0.2
	done
}
# new_actions: the procd actions since the last call (it runs in $(...),
# so the count is kept in a file).
echo 0 >"$PD/seen"
new_actions() {
	tail -n +"$(($(cat "$PD/seen") + 1))" "$PD/actions"
	wc -l <"$PD/actions" >"$PD/seen"
}
# dlog [WANT]: the stand-in's log, once it holds WANT (up to 5 s): its
# trap writes the line after the signal lands, not when procd sends it.
dlog() {
	local i=0
	while [ -n "${1:-}" ] && ! grep -qF -- "$1" "$SB/daemon.log" && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	cat "$SB/daemon.log"
}

# --- start: one instance, the triggers, what it declares ------------------
st=0
initd start || st=$?
t_eq "openwrt: start exits 0" 0 "$st"
out=$(cat "$SB/calls")
t_has "openwrt: START 18, before firewall (19) and network (20)" "START=18 " "$out"
t_has "openwrt: USE_PROCD=1" "USE_PROCD=1" "$out"
t_has "openwrt: the instance's command is \`nasboot run\` on the UCI profile" "command $SB/nasboot --config /etc/nasboot.toml run" "$(cat "$PD/cur")"
t_has "openwrt: respawn after 5 s, 5 retries" "respawn 3600 5 5" "$(cat "$PD/cur")"
t_has "openwrt: the profile's checksum is registered" "file /etc/nasboot.toml $(md5sum <"$SB/root/etc/nasboot.toml" | cut -d' ' -f1)" "$(cat "$PD/cur")"
t_has "openwrt: a changed profile means SIGHUP" "reload_signal HUP" "$(cat "$PD/cur")"
t_eq "openwrt: the reload trigger is for UCI package nasboot" "config.change nasboot" "$(cat "$PD/triggers")"
a=$(new_actions)
pid=$(inst_pid)
t_eq "openwrt: procd spawned the instance" "spawn $pid" "$a"
t_has "openwrt: it runs" "start $pid --config /etc/nasboot.toml run" "$(dlog "start $pid --config /etc/nasboot.toml run")"

initd start
t_eq "openwrt: start again, nothing changed: procd does nothing" "" "$(new_actions)"

# --- the TOML alone: no trigger; the next start or a reload: SIGHUP --------
sb_profile 600
reload_config
t_eq "openwrt: negative control: the TOML edited, reload_config fires nothing" "" "$(new_actions)"
procd_event config.change network
t_eq "openwrt: negative control: config.change for another package fires nothing" "" "$(new_actions)"
sed -i "s|'static'|'dhcp'|" "$SB/root/etc/config/network"
reload_config
t_eq "openwrt: negative control: /etc/config/network changed, reload_config fires nothing for nasboot" "" "$(new_actions)"
initd start
t_eq "openwrt: start with the TOML changed: SIGHUP (file checksum), same pid" "signal HUP $pid" "$(new_actions)"
t_has "openwrt: the daemon got SIGHUP" "HUP $pid" "$(dlog "HUP $pid")"
initd start
t_eq "openwrt: start again: the checksum was taken, nothing" "" "$(new_actions)"
sb_profile 700
st=0
initd reload || st=$?
t_eq "openwrt: reload exits 0" 0 "$st"
t_eq "openwrt: reload with the TOML changed: SIGHUP, same pid" "signal HUP $pid" "$(new_actions)"
initd reload
t_eq "openwrt: reload, nothing changed: nothing" "" "$(new_actions)"

# --- UCI: uci set + commit + reload_config fires the trigger ---------------
sb_profile 800
cp "$SB/root/etc/nasboot.toml" "$SB/root/etc/nasboot-alt.toml"
sb_profile 700
uci_set profile /etc/nasboot-alt.toml
reload_config
a=$(new_actions)
t_has "openwrt: uci set profile + reload_config: the trigger runs reload" "trigger config.change nasboot" "$a"
t_has "openwrt: another profile path: the instance is restarted (SIGTERM)" "term $pid" "$a"
pid2=$(inst_pid)
t_has "openwrt: a new instance" "spawn $pid2" "$a"
t_has "openwrt: on the UCI profile" "start $pid2 --config /etc/nasboot-alt.toml run" "$(dlog "start $pid2 --config /etc/nasboot-alt.toml run")"
reload_config
t_eq "openwrt: negative control: reload_config, nothing changed: nothing" "" "$(new_actions)"

# A broken profile: a refused reload touches nothing.
printf '[board]\nname = "t"\n[watchdog]\ntimeout = 0\n' >"$SB/root/etc/nasboot-alt.toml"
st=0
initd reload || st=$?
t_check "openwrt: reload of a broken profile fails (status $st)" test "$st" -ne 0
t_has "openwrt: it is logged with file:line:column and key" "reload refused, profile rejected: nasboot: /etc/nasboot-alt.toml:4:11: watchdog.timeout:" "$(cat "$SB/calls")"
t_eq "openwrt: a refused reload: no registration, no signal, no restart" "" "$(new_actions)"
t_check "openwrt: the daemon still runs" sb_alive "$pid2"
cp "$SB/root/etc/nasboot.toml" "$SB/root/etc/nasboot-alt.toml"

# enabled '0': the next reload stops the instance, and it is not respawned.
uci_set enabled 0
reload_config
a=$(new_actions)
t_has "openwrt: uci set enabled=0 + reload_config: the instance is stopped" "term $pid2" "$a"
t_has "openwrt: disabled: it is logged" "disabled in /etc/config/nasboot" "$(cat "$SB/calls")"
respawn_watch 6
t_eq "openwrt: disabled: not respawned" "" "$(new_actions)"
uci_set enabled 1
reload_config
a=$(new_actions)
pid3=$(inst_pid)
t_has "openwrt: enabled=1 again: a new instance" "spawn $pid3" "$a"

# --- respawn: a killed instance comes back after its delay -----------------
kill -KILL "$pid3"
respawn_watch 3
t_eq "openwrt: killed: not respawned within 3 s (the delay is 5 s)" "" "$(new_actions)"
respawn_watch 4
a=$(new_actions)
pid4=$(inst_pid)
t_has "openwrt: killed: respawned after its delay" "respawn after 5 s" "$a"
t_check "openwrt: the respawned instance runs" sb_alive "$pid4"

# --- no [watchdog]; a broken profile at start ------------------------------
uci_set profile /etc/nasboot.toml
reload_config
new_actions >/dev/null
printf '[board]\nname = "t"\n[firewall]\nprofile = "off"\n[sysctl]\nset = { "net.core.somaxconn" = "700" }\n' >"$SB/root/etc/nasboot.toml"
st=0
initd start || st=$?
t_eq "openwrt: no [watchdog]: start exits 0" 0 "$st"
t_check "openwrt: no [watchdog]: no instance (procd would respawn \`run\`)" test ! -e "$PD/cur"
t_eq "openwrt: no [watchdog]: the profile was applied once" 700 "$(cat "$SB/root/proc/sys/net/core/somaxconn")"

printf '[board]\nname = "t"\n[firewall]\nprofile = "of"\n' >"$SB/root/etc/nasboot.toml"
st=0
initd start || st=$?
out=$(cat "$SB/calls")
t_check "openwrt: start with a broken profile fails (status $st)" test "$st" -ne 0
t_has "openwrt: the error is logged with file:line:column and key" "logger -t nasboot -p daemon.err profile rejected: nasboot: /etc/nasboot.toml:4:11: firewall.profile:" "$out"
t_check "openwrt: no instance for a broken profile" test ! -e "$PD/cur"
case $out in
*"fallback firewall failed"*) t_fail "openwrt: the fallback firewall is applied: $out" ;;
*) t_ok "openwrt: the fallback firewall is applied" ;;
esac
t_check "openwrt: the board's namespace is locked down (nft: input policy drop)" sb_locked_down
ip netns exec "${SB_NS}box" nft flush ruleset

# The hotplug handler (/etc/hotplug.d/net/50-nasboot), run by BusyBox's sh
# the way procd runs it, calling the real binary on the real kernel (no
# --root: the firewall reads the links and the kernel release) through a
# wrapper that records each call.
hotplug=$T_TOP/board/init/openwrt/nasboot.hotplug
t_check "openwrt hotplug: shellcheck" shellcheck "$hotplug"
t_check "openwrt hotplug: busybox sh -n" "$busybox" sh -n "$hotplug"
printf '[board]\nname = "t"\n[[interface]]\nname = "eth0"\nrole = "wan"\n[[interface]]\nname = "eth1"\nrole = "lan"\n[firewall]\nbackend = "nftables"\n' >"$SB/hotplug.toml"
cat >"$SB/nasboot-rec" <<EOF2
#!/bin/sh
echo "\$*" >>$SB/hotplug-calls
exec $bin "\$@"
EOF2
chmod +x "$SB/nasboot-rec"
# The profile comes from the UCI file, through the modelled functions.sh.
sed -e "s|^NASBOOT=.*|NASBOOT=$SB/nasboot-rec|" -e "s|^FUNCTIONS=.*|FUNCTIONS=$SB/functions.sh|" "$hotplug" >"$SB/hotplug"
mkdir -p "$SB/hproot/etc/config"
printf "config nasboot 'main'\n\toption profile '%s'\n\toption enabled '0'\n" "$SB/hotplug.toml" >"$SB/hproot/etc/config/nasboot"
: >"$SB/hotplug-calls"
# hotplug ACTION INTERFACE: one event.
hotplug() {
	ip netns exec "${SB_NS}box" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin "ACTION=$1" "INTERFACE=$2" "ROOT=$SB/hproot" "$busybox" sh "$SB/hotplug"
}
box_rules() { ip netns exec "${SB_NS}box" nft list ruleset; }
ip netns exec "${SB_NS}box" "$bin" -q --config "$SB/hotplug.toml" firewall apply
extra=$(netns_box_extra "$SB_NS")
if [ -z "$extra" ]; then
	t_has "openwrt hotplug: lo, eth0 and eth1, all named: the ingress hooks" 'hook ingress device "eth0"' "$(box_rules)"
else
	t_has "openwrt hotplug: links the profile does not name ($extra): the input chain" 'hook input' "$(box_rules)"
fi
hotplug add lo
hotplug remove eth1
t_eq "openwrt hotplug: loopback and removals apply nothing" "" "$(cat "$SB/hotplug-calls")"
ip -n "${SB_NS}box" link add usb0 type veth peer name usb1
hotplug add usb0
t_eq "openwrt hotplug: enabled '0' in /etc/config/nasboot: nothing applied" "" "$(cat "$SB/hotplug-calls")"
sed -i "s/option enabled '0'/option enabled '1'/" "$SB/hproot/etc/config/nasboot"
hotplug add usb0
t_eq "openwrt hotplug: an added device re-applies the firewall, with the UCI file's profile" "-q --config $SB/hotplug.toml firewall apply" "$(cat "$SB/hotplug-calls")"
t_has "openwrt hotplug: usb0 is in no zone: the input chain (policy drop)" 'hook input' "$(box_rules)"
rules=$(box_rules)
case $rules in
*"hook ingress"*) t_fail "openwrt hotplug: usb0 is in no zone: no ingress hook left" ;;
*) t_ok "openwrt hotplug: usb0 is in no zone: no ingress hook left" ;;
esac
t_done
