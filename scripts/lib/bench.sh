# shellcheck shell=bash
# A benchmark's inputs from outside the repository and its result rows.
# Sourced by scripts/bench-* and scripts/footprint.
#
# bench_anchor FILE
#   The path of FILE among the benchmark anchors (other projects' files:
#   the Bubba 2's shipped rules, OpenWrt fw4's rule sets). They are read
#   from NASBOOT_ANCHORS, by default ../shared/anchors beside the
#   checkout. Missing: a message naming the file and the variable, and
#   status 1 (call it as `f=$(bench_anchor NAME) || exit 1`).
#
# bench_row NAME BOARD BUILD VARIANT VALUE UNIT [ANCHOR [RATIO]]
#   Appends one row to bench/results/NAME.csv (NASBOOT_RESULTS=DIR: to
#   DIR/NAME.csv; NASBOOT_RESULTS= empty: nowhere): the date (UTC) and
#   the checkout's tree (`-dirty` with changes outside bench/results)
#   of the first row this process wrote, then the fields given. ANCHOR
#   is the variant of the anchor row in the same run, RATIO the figure
#   against it as the docs show it (`10.1x`, `98.2%`).
#   scripts/render-docs renders the docs' tables from these files
#   (scripts/README.md, "Benchmarks").

BENCH_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NASBOOT_ANCHORS=${NASBOOT_ANCHORS:-$BENCH_TOP/../shared/anchors}
NASBOOT_RESULTS=${NASBOOT_RESULTS-$BENCH_TOP/bench/results}
BENCH_DATE=
BENCH_TREE=

bench_anchor() {
	if [ ! -f "$NASBOOT_ANCHORS/$1" ]; then
		echo "${0##*/}: no benchmark anchor $1 in $NASBOOT_ANCHORS (set NASBOOT_ANCHORS to the directory that holds it; default ../shared/anchors beside the checkout)" >&2
		return 1
	fi
	echo "$NASBOOT_ANCHORS/$1"
}

# One CSV field, quoted when it holds a comma or a quote (RFC 4180).
bench_field() {
	case $1 in
	*[,\"]*) printf '"%s"' "${1//\"/\"\"}" ;;
	*) printf '%s' "$1" ;;
	esac
}

bench_row() {
	if [ $# -lt 6 ] || [ $# -gt 8 ] || [ -z "$4" ] || [ -z "$5" ]; then
		echo "bench_row: NAME BOARD BUILD VARIANT VALUE UNIT [ANCHOR [RATIO]] (variant and value not empty)" >&2
		return 2
	fi
	[ -n "$NASBOOT_RESULTS" ] || return 0
	local name=$1 f line field
	shift
	case "$*" in *$'\n'*)
		echo "bench_row: a field holds a line break" >&2
		return 2
		;;
	esac
	if [ -z "$BENCH_DATE" ]; then
		BENCH_DATE=$(date -u +%F)
		BENCH_TREE=$(git -C "$BENCH_TOP" rev-parse --short=7 HEAD 2>/dev/null || true)
		if [ -n "$BENCH_TREE" ] && [ -n "$(git -C "$BENCH_TOP" status --porcelain --untracked-files=no -- . ':!bench/results' 2>/dev/null)" ]; then
			BENCH_TREE=$BENCH_TREE-dirty
		fi
	fi
	f=$NASBOOT_RESULTS/$name.csv
	mkdir -p "$NASBOOT_RESULTS"
	[ -s "$f" ] || echo 'date,tree,board,build,variant,value,unit,anchor,ratio' >"$f"
	line=$BENCH_DATE,$BENCH_TREE
	set -- "$@" "" ""
	for field in "$1" "$2" "$3" "$4" "$5" "$6" "$7"; do
		line=$line,$(bench_field "$field")
	done
	echo "$line" >>"$f"
}
