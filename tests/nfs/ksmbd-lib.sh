#!/bin/bash
# The script run inside the namespace is single-quoted on purpose.
# shellcheck disable=SC2016
# Sourced by the suites that check a ksmbd.conf with Debian's ksmbd-tools
# (3.4.7) on a host whose kernel has no ksmbd module.
#
# ksmbd-tools has no check mode. `ksmbd.addshare` parses the file's syntax
# only (it takes any key and value, and rewrites the file). ksmbd.mountd's
# worker parses it whole, global and share keys into its tables, and the
# users from the password database, before it asks the kernel for ksmbd's
# generic netlink family; with -v it logs each share and user it loaded
# ("New share `NAME'", "New user `NAME'"), then, without the module,
# "Cannot resolve netlink family", and its manager starts a worker again
# and again. So ksmbd_parse runs ksmbd.mountd -n -v in a pid namespace of
# its own (with private mount and network namespaces and a tmpfs /run for
# its lock file), reads its log until the netlink line or a parse failure,
# and kills the namespace. Its log is stdio, fully buffered into a file:
# stdbuf makes it line-buffered.

# ksmbd_parse CONF PWDDB OUT: ksmbd.mountd's log for CONF in OUT. Returns
# 0 when it parsed the file and reached the netlink step, 1 otherwise.
ksmbd_parse() {
	local conf=$1 db=$2 out=$3 pid _
	: >"$out"
	unshare -m -n -p --fork --kill-child -- sh -c '
		mount -t tmpfs ksmbdrun /run
		exec stdbuf -oL -eL ksmbd.mountd -v -n -c "$1" -u "$2"' ksmbd_parse "$conf" "$db" >"$out" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		grep -Eq 'Cannot resolve netlink family|Failed to parse|Unable to|ERROR' "$out" && break
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	grep -q 'Cannot resolve netlink family' "$out" && ! grep -v 'Cannot resolve netlink family' "$out" | grep -q 'ERROR'
}

# ksmbd_shares LOG: the shares ksmbd.mountd loaded, one a line, sorted
# (IPC$ is its own).
ksmbd_shares() {
	sed -n "s/.*New share \`\(.*\)'$/\1/p" "$1" | grep -vx 'IPC\$' | sort -u
}

# ksmbd_users LOG: the users it loaded from the database, sorted.
ksmbd_users() {
	sed -n "s/.*New user \`\(.*\)'$/\1/p" "$1" | sort -u
}
