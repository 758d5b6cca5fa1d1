# shellcheck shell=bash
# lock_run NAME CMD...: CMD holding nasboot's lock NAME (flock on
# /run/lock/nasboot-NAME.lock); without one where /run/lock cannot be
# written (not root: nothing installs there). scripts/test runs two
# steps at a time, and apt-get, rustup and the musl build each fail or
# clash when two run at once (scripts/lib/apt.sh, scripts/lib/toolchain.sh).
# A nested call for a lock already held (NASBOOT_LOCKS_HELD) runs CMD at
# once. Sourced; defines this function only.
lock_run() {
	local name=$1
	shift
	case " ${NASBOOT_LOCKS_HELD:-} " in *" $name "*)
		"$@"
		return
		;;
	esac
	if [ ! -w /run/lock ]; then
		"$@"
		return
	fi
	(
		export NASBOOT_LOCKS_HELD="${NASBOOT_LOCKS_HELD:-} $name"
		flock 9 && "$@"
	) 9>"/run/lock/nasboot-$name.lock"
}
