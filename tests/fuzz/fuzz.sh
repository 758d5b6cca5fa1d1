#!/bin/bash
# shellcheck source-path=SCRIPTDIR
# Every fuzz target (tests/fuzz/fuzz_targets, entry points in
# src/fuzzing.rs, whose documentation has each target's invariants) under
# libFuzzer for FUZZ_SECONDS each (default 7), from the seed corpus:
# tests/fuzz/seeds/TARGET, plus board/*.toml and tests/profiles/*.toml for
# profile, plan and toml. The targets and what each asserts beyond "no
# panic":
#   profile        arbitrary bytes as a profile: every error names the
#                  file, a line within the text, a column >= 1, a key
#   toml           our parser (config::document) and the toml crate give
#                  the same tree (kinds, values, spans) or both refuse;
#                  ours may also refuse nesting past 32; where toml is
#                  more lenient than TOML 1.1 (a line break or comment
#                  between a key and its `=` in an inline table) our
#                  refusal counts as agreeing (reference::toml_lenient)
#   plan           a profile observed on four fake boards: every rule set
#                  names no interface, port or address the profile did
#                  not; export paths round-trip
#   export_path    unescape(escape_path(p)) == p, one token for nfs-utils
#   proc_files     /proc and /sys files as read for checks and sizing:
#                  listeners inside the range and not loopback
#   history        the reset history: parse, render, parse is the same
#   board_configs  nfs-kernel-server, nfs.conf, smb.conf as found: a
#                  rewrite of the rewrite is the rewrite
#   tool_output    iptables-save output, exportfs errors: the rollback
#                  keeps the dump whole, every table on a line of its own
#   netlink        rtnetlink replies: addresses and routes read have a
#                  prefix that fits the family
#   nf_tables      nf_tables replies, both byte orders: an error counts
#                  only for the batch's numbers and never reads as
#                  success; every dumped object replays and walks whole
#
# Seeds were captured from this machine's /proc and rtnetlink
# (tests/fuzz/capture-netlink.py) and from the kernel's nf_tables replies
# to the golden batches (tests/fuzz/capture-nftables.py). An input that
# once crashed a target is kept in tests/fuzz/regressions/TARGET/, run
# first, and is also a unit test beside the code it broke.
#
# A target passes when libFuzzer finds no crash (a panic: an invariant of
# src/fuzzing.rs broken, or a parser that panics); the crashing input is
# kept under $FUZZ_OUT (default /tmp/nasboot-fuzz) and printed.
#
# cargo-fuzz is installed once into /var/cache/nasboot/cargo-fuzz-VERSION
# (outside the clone) and the fuzz build's target directory is
# /var/cache/nasboot/fuzz-target, so a warm run builds only what changed.
# The toolchain is stable: cargo-fuzz's -Z flags need RUSTC_BOOTSTRAP=1.
# No sanitizer (-s none): the targets are safe Rust, and ASan costs a
# third of the executions. Debug assertions on (-a), so an integer
# overflow panics here instead of wrapping silently as on the boards.
#
#   tests/fuzz/fuzz.sh                      # all targets, 7 s each
#   FUZZ_SECONDS=3600 tests/fuzz/fuzz.sh plan   # one target, by hand
#
# The per-target figures (executions, edges covered of those
# instrumented, corpus size) are printed as a table at the end. The
# instrumented total counts every edge of the binary, including code a
# target never calls, so the share covered is low by construction.
set -eu
# shellcheck source=../lib.sh
. "$(cd "$(dirname "$0")/.." && pwd)/lib.sh"

t_need g++

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SECONDS_EACH=${FUZZ_SECONDS:-7}
OUT=${FUZZ_OUT:-/tmp/nasboot-fuzz}
CACHE=${NASBOOT_CACHE:-/var/cache/nasboot}
FUZZ_VERSION=0.13.2
FUZZ_ROOT=$CACHE/cargo-fuzz-$FUZZ_VERSION
export CARGO_TARGET_DIR=$CACHE/fuzz-target
export RUSTC_BOOTSTRAP=1

if [ ! -x "$FUZZ_ROOT/bin/cargo-fuzz" ]; then
	mkdir -p "$CACHE"
	cargo install cargo-fuzz --version "$FUZZ_VERSION" --locked --root "$FUZZ_ROOT" >"$CACHE/cargo-fuzz-install.log" 2>&1 ||
		{ tail -20 "$CACHE/cargo-fuzz-install.log"; exit 1; }
fi
PATH=$FUZZ_ROOT/bin:$PATH

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
	for f in "$ROOT"/tests/fuzz/fuzz_targets/*.rs; do
		f=${f##*/}
		targets+=("${f%.rs}")
	done
fi

cd "$ROOT"
build_start=$(date +%s)
if ! cargo fuzz build -O -a -s none --fuzz-dir tests/fuzz >"$OUT.build.log" 2>&1; then
	tail -30 "$OUT.build.log"
	t_fail "cargo fuzz build"
	t_done
fi
t_ok "cargo fuzz build ($(($(date +%s) - build_start)) s)"
BIN=$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release

rm -rf "$OUT"
mkdir -p "$OUT"
regress() { "$BIN/$1" -runs=1 "$ROOT/tests/fuzz/regressions/$1"/* >"$OUT/$1.regressions.log" 2>&1; }
table=$(printf '%-14s %10s %8s %12s %8s %6s\n' target executions exec/s edges "of" corpus)
for t in "${targets[@]}"; do
	corpus=$OUT/corpus/$t
	mkdir -p "$corpus"
	cp "$ROOT/tests/fuzz/seeds/$t/"* "$corpus/" 2>/dev/null || true
	case $t in profile | plan | toml) cp "$ROOT"/board/*.toml "$ROOT"/tests/profiles/*.toml "$corpus/" ;; esac
	log=$OUT/$t.log
	# The inputs that once crashed it (each also a unit test) run first.
	if [ -d "$ROOT/tests/fuzz/regressions/$t" ]; then
		t_check "fuzz $t: the regression inputs pass" regress "$t"
	fi
	if "$BIN/$t" -seed=1 -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=1024 -max_len=16384 \
		-artifact_prefix="$OUT/$t-" -print_final_stats=1 "$corpus" >"$log" 2>&1; then
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
		edges=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -n 's/.* cov: \([0-9]*\) .*/\1/p')
		total=$(sed -n 's/.*Loaded 1 modules *(\([0-9]*\) inline 8-bit counters).*/\1/p' "$log" | head -1)
		units=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p')
		table+=$(printf '\n%-14s %10s %8s %12s %8s %6s' "$t" "$execs" "$rate" "$edges" "$total" "$units")
		t_ok "fuzz $t: $execs executions in $SECONDS_EACH s, $edges edges, no crash"
	else
		grep -E 'panicked|ERROR|SUMMARY' -A3 "$log" | head -20
		crash=("$OUT/$t-"*)
		t_fail "fuzz $t: crash, input kept as ${crash[0]}"
	fi
done
printf '\n%s\n' "$table"
t_done
