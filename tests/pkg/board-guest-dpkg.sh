#!/bin/sh
# Guest side of tests/pkg/board-dpkg.sh: nasboot's Debian package installed,
# upgraded, reinstalled, downgraded, removed and purged with Debian's dpkg
# on the emulated board, the real softdog as /dev/watchdog0. One
# "pkgtest: ok|FAIL ..." line per check, then "pkgtest: done".
#
# What stands in for a booted Debian system: PID 1 is the board's busybox
# /init, not sysvinit, so /sbin/runlevel (sysvinit's reads utmp, which
# nothing writes here) is a stand-in that says "N 2", as on a Debian box
# in its default runlevel; invoke-rc.d asks it. "The next boot" is
# sysv-rc's /lib/init/rc S, which /etc/init.d/rcS runs at boot, running
# the rcS.d links update-rc.d made.
# shellcheck shell=sh

# Under Debian's dash, so that the tools are Debian's (busybox's sh
# prefers its own applets).
if [ "${PKGTEST_SHELL:-}" != dash ]; then
	PKGTEST_SHELL=dash exec /bin/dash "$0"
fi
# shellcheck source=tests/pkg/board-guest-lib.sh
. /board/pkgtest-lib.sh
# shellcheck source=/dev/null
. /root/versions

P=/run/nasboot.pid
deb() { echo "/root/nasboot_$1_mipsel.deb"; }
# dpkg_do ARGS...: dpkg with no terminal to prompt on; sets $out and $rc.
dpkg_do() {
	t0=$(cut -d. -f1 /proc/uptime)
	out=$(dpkg "$@" </dev/null 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/dpkg: /'
	echo "dpkg $*: $(($(cut -d. -f1 /proc/uptime) - t0)) s"
}
state() { dpkg-query -W -f '${db:Status-Abbrev}${Version}' nasboot 2>/dev/null | tr -s ' '; }
pid_now() { cat $P 2>/dev/null || echo none; }
# user_profile TIMEOUT: the packaged default profile with the user's edit:
# the watchdog's timeout and interval (softdog follows the timeout).
user_profile() {
	sed -e "s/^timeout = .*/timeout = $1/" -e 's/^interval = .*/interval = 1/' "$2" >"$cfg"
}

# What Debian's base system has and the board's /init does not make.
mkdir -p /var/log /var/lib/dpkg/info /var/lib/dpkg/updates /var/lib/dpkg/triggers
: >/var/lib/dpkg/available
[ -e /var/run ] || ln -s /run /var/run
printf '#!/bin/sh\necho "N 2"\n' >/sbin/runlevel
chmod 755 /sbin/runlevel
# The binary comes from the package, not from the board's staging.
rm -f /usr/sbin/nasboot
check "dpkg's database lists the board's Debian packages (init-system-helpers)" \
	[ "$(dpkg-query -W -f '${Status}' init-system-helpers 2>&1)" = "install ok installed" ]
check "negative control: nasboot is not installed yet" [ -z "$(state)" ]
# A WAN for real on eth0, the packaged profile's WAN (board-guest-lib.sh),
# and the controls without a rule set.
wan_up eth0
wan_controls

# --- install over a broken profile ------------------------------------------
# A profile left by hand (with a typo) where the package's conffile goes:
# dpkg keeps it (--force-confold, as unattended installs answer the
# prompt); the start fails and dpkg still finishes.
printf '[board]\nname = "t"\n[firewall]\nprofile = "of"\n' >"$cfg"
dpkg_do --force-confold -i "$(deb "$V1")"
check "install over a broken profile: dpkg exits 0" [ "$rc" -eq 0 ]
check "it is installed and configured (ii $V1)" [ "$(state)" = "ii $V1" ]
has "the error names file:line:column and key" "/etc/nasboot.toml:4:11: firewall.profile:" "$out"
has "postinst says what to do" "Fix it, then run: invoke-rc.d nasboot restart" "$out"
check "no daemon" [ "$(daemons)" -eq 0 ]
check "softdog left closed" [ "$(wd_state)" = inactive ]
lockdown "install over a broken profile: the WAN is not open"
check "the packaged profile is beside it (.dpkg-dist)" grep -q '^name = "debian"' /etc/nasboot.toml.dpkg-dist

# The user's fix: the packaged profile, with the watchdog's timeout edited.
user_profile 5 /etc/nasboot.toml.dpkg-dist
rm -f /etc/nasboot.toml.dpkg-dist
nft flush ruleset
out=$(invoke-rc.d nasboot restart 2>&1)
rc=$?
pid=$(pid_now)
[ "$rc" -eq 0 ] && alive "$pid"
is "fixed: invoke-rc.d nasboot restart starts the daemon ($out)"
[ "$(wd_state)" = active ] && [ "$(wd_timeout)" = 5 ]
is "softdog armed with the user's timeout (5 s)"
rules=$(nft list table inet nasboot 2>&1)
has "the packaged profile's firewall is loaded: eth0 is the WAN" '"eth0" : jump wan' "$rules"
has "the packaged profile's firewall is loaded: eth1 is the LAN, SSH only" "elements = { 22 }" "$rules"
! wan_in
is "the packaged profile: the WAN host cannot connect to the box (port 8080, for real)"
! on_wan ping -c 1 -W 2 198.51.100.2 >/dev/null 2>&1
is "the packaged profile: the WAN host's ping gets no answer"
box_out
is "the packaged profile: the box's own connection out gets its replies"

# --- registered: the rc links, and the next boot ------------------------------
check "update-rc.d: /etc/rcS.d/S01nasboot" [ "$(readlink /etc/rcS.d/S01nasboot)" = ../init.d/nasboot ]
[ -L /etc/rc0.d/K01nasboot ] && [ -L /etc/rc1.d/K01nasboot ] && [ -L /etc/rc6.d/K01nasboot ]
is "update-rc.d: stopped in 0, 1, 6"
check "conffiles: the profile, the default file, the init script" \
	[ "$(dpkg-query -W -f '${Conffiles}' nasboot | awk 'NF {print $1}' | sort | tr '\n' ' ')" = "/etc/default/nasboot /etc/init.d/nasboot /etc/nasboot.toml " ]
/etc/init.d/nasboot stop >/dev/null 2>&1
[ "$(daemons)" -eq 0 ] && [ "$(wd_state)" = inactive ]
is "stopped before the boot (magic close)"
# On the console, as at boot (rc's stty wants a terminal).
/lib/init/rc S
pid=$(pid_now)
alive "$pid"
is "the next boot (sysv-rc's rc S): the daemon starts"
cmd=$(tr '\0' ' ' <"/proc/$pid/cmdline")
check "its command line is \`run --background\` with the pidfile ($cmd)" [ "${cmd#"/usr/sbin/nasboot --config /etc/nasboot.toml run --background --pidfile $P "}" != "$cmd" ]
[ "$(wd_state)" = active ] && [ "$(wd_timeout)" = 5 ]
is "softdog armed, 5 s"
sleep 7
check "the board outlived the timeout: the daemon pets" alive "$pid"

# --- upgrade: the same packaged profile ----------------------------------------
dpkg_do -i "$(deb "$V2")"
check "upgrade to $V2: dpkg exits 0" [ "$rc" -eq 0 ]
check "installed: ii $V2" [ "$(state)" = "ii $V2" ]
check "the user's profile is kept (timeout 5)" grep -q '^timeout = 5$' "$cfg"
check "no .dpkg-dist: the packaged profile did not change" [ ! -e /etc/nasboot.toml.dpkg-dist ]
pid2=$(pid_now)
[ "$pid2" != "$pid" ] && alive "$pid2" && ! alive "$pid"
is "the daemon was restarted ($pid -> $pid2)"
check "one daemon" [ "$(daemons)" -eq 1 ]
check "it runs the new binary" [ "$(readlink /proc/"$pid2"/exe)" = /usr/sbin/nasboot ]
[ "$(wd_state)" = active ] && [ "$(wd_timeout)" = 5 ]
is "softdog armed by the new daemon, 5 s"
sleep 7
check "the board outlived the timeout after the upgrade" alive "$pid2"

# --- upgrade, the packaged profile changed, the user's one broken -------------
printf '[board]\nname = "t"\n[watchdog]\ntimeout = 0\n' >"$cfg"
dpkg_do --force-confold -i "$(deb "$V3")"
check "upgrade to $V3 with a broken profile: dpkg exits 0" [ "$rc" -eq 0 ]
check "installed: ii $V3" [ "$(state)" = "ii $V3" ]
has "the restart was refused, naming file:line:column" "/etc/nasboot.toml:4:11: watchdog.timeout:" "$out"
check "the user's profile is kept" grep -q '^timeout = 0$' "$cfg"
check "the new packaged profile is beside it (.dpkg-dist, timeout 90)" grep -q '^timeout = 90$' /etc/nasboot.toml.dpkg-dist
alive "$pid2" && [ "$(pid_now)" = "$pid2" ]
is "the running daemon was kept ($pid2)"
check "softdog still armed by it" [ "$(wd_state)" = active ]
sleep 7
check "the board outlived the timeout" alive "$pid2"
user_profile 5 /etc/nasboot.toml.dpkg-dist
out=$(invoke-rc.d nasboot restart 2>&1)
rc=$?
pid3=$(pid_now)
[ "$rc" -eq 0 ] && alive "$pid3" && [ "$pid3" != "$pid2" ]
is "fixed: restart ($out)"

# --- the same version again, then a downgrade --------------------------------
dpkg_do -i "$(deb "$V3")"
check "reinstall $V3: dpkg exits 0" [ "$rc" -eq 0 ]
has "dpkg unpacks it over itself" "over ($V3)" "$out"
check "installed: ii $V3" [ "$(state)" = "ii $V3" ]
pid4=$(pid_now)
alive "$pid4" && ! alive "$pid3" && [ "$(daemons)" -eq 1 ]
is "the daemon was restarted cleanly ($pid3 -> $pid4)"
# The packaged profile differs (timeout 90 in $V3, 60 in $V1) and the
# user edited it: dpkg would ask; --force-confold answers "keep mine".
dpkg_do --force-confold -i "$(deb "$V1")"
check "downgrade to $V1: dpkg exits 0" [ "$rc" -eq 0 ]
has "dpkg says it is downgrading" "downgrading nasboot from $V3 to $V1" "$out"
check "installed: ii $V1" [ "$(state)" = "ii $V1" ]
check "the user's profile is kept" grep -q '^timeout = 5$' "$cfg"
check "$V1's packaged profile is beside it (.dpkg-dist, timeout 60)" grep -q '^timeout = 60$' /etc/nasboot.toml.dpkg-dist
pid5=$(pid_now)
alive "$pid5" && [ "$(daemons)" -eq 1 ] && [ "$(wd_state)" = active ]
is "the daemon runs ($pid5), softdog armed"

# --- remove, purge ------------------------------------------------------------
dpkg_do -r nasboot
check "remove: dpkg exits 0" [ "$rc" -eq 0 ]
check "the daemon is gone" wait_gone "$pid5"
check "magic close: softdog stopped" [ "$(wd_state)" = inactive ]
check "the binary is gone" [ ! -e /usr/sbin/nasboot ]
[ "$(state)" = "rc $V1" ] && [ -f "$cfg" ] && [ -f /etc/init.d/nasboot ]
is "the conffiles stay (rc $(state))"
sleep 7
ok "the board outlived the timeout after remove (no reset)"
/lib/init/rc S
[ "$(daemons)" -eq 0 ] && [ "$(wd_state)" = inactive ]
is "a boot after remove starts nothing"
dpkg_do -P nasboot
check "purge: dpkg exits 0" [ "$rc" -eq 0 ]
[ ! -e "$cfg" ] && [ ! -e /etc/default/nasboot ] && [ ! -e /etc/init.d/nasboot ]
is "purge: the conffiles are gone"
[ ! -e /etc/nasboot.toml.dpkg-dist ] && [ ! -e /var/log/nasboot.log ]
is "purge: .dpkg-dist and the log are gone"
[ ! -e /etc/rcS.d/S01nasboot ] && [ ! -e /etc/rc0.d/K01nasboot ]
is "purge: the rc links are gone"
check "purge: dpkg knows nothing of it" [ -z "$(state)" ]

# --- a board without a watchdog device -----------------------------------------
nft flush ruleset
rmmod softdog
[ ! -e /dev/watchdog0 ] && [ ! -e /dev/watchdog ]
is "softdog unloaded: no watchdog device"
# The packaged profile's LAN: postinst does not start on a first install
# where an interface the profile names is missing.
ip link add eth1 type veth peer name eth1peer
dpkg_do -i "$(deb "$V1")"
check "no watchdog: dpkg exits 0" [ "$rc" -eq 0 ]
check "no watchdog: installed (ii $V1)" [ "$(state)" = "ii $V1" ]
has "no watchdog: it says so" "no watchdog device: tried /dev/watchdog0, /dev/watchdog (is the driver loaded?)" "$out"
has "no watchdog: the rest is applied (the packaged firewall)" '"eth0" : jump wan' "$(nft list table inet nasboot 2>&1)"
check "no watchdog: no daemon left" [ "$(daemons)" -eq 0 ]
dpkg_do -P nasboot
[ "$rc" -eq 0 ] && [ -z "$(state)" ]
is "no watchdog: purged"

kill "$wanns"
dmesg >/tmp/dmesg
check "no 'watchdog did not stop' in the kernel log" [ "$(grep -c 'did not stop' /tmp/dmesg)" -eq 0 ]
echo "pkgtest: done"
