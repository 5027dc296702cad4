#!/usr/bin/env bash
# Exact per-iteration counts of one benchmark under valgrind, the figures docs/performance.md
# quotes beside wall-clock ratios (they do not move with the machine's load).
#
#   scripts/count.sh TESTBIN BENCH-REGEX [callgrind|cachegrind]
#
# Run from the directory of the package the test binary was built from (go test -c). The
# benchmark runs at 20 and at 220 iterations with the collector off (GOGC=off) and preemption
# signals off; the difference of the two totals divided by 200 is one iteration, set-up left out.
# callgrind prints instructions; cachegrind (--cache-sim=yes) also first-level data-cache read
# misses (cachegrind takes the host's cache sizes).
set -euo pipefail
if [ $# -lt 2 ]; then
	echo "usage: $0 TESTBIN BENCH-REGEX [callgrind|cachegrind]" >&2
	exit 2
fi
bin=$1 bench=$2 tool=${3:-callgrind}
command -v valgrind >/dev/null || { echo "$0: valgrind is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# totals N prints "instructions misses" of a run at N iterations (misses 0 under callgrind).
totals() {
	local n=$1
	local out=$tmp/out.$n
	GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool="$tool" $([ "$tool" = cachegrind ] && echo --cache-sim=yes) \
		--"$tool"-out-file="$out" "$bin" -test.run '^$' -test.bench "$bench" -test.benchtime "${n}x" -test.cpu 1 \
		>"$tmp/log.$n" 2>&1 || { cat "$tmp/log.$n" >&2; exit 1; }
	if [ "$tool" = cachegrind ]; then
		# summary: Ir I1mr ILmr Dr D1mr ...
		awk '/^summary:/ {print $2, $6}' "$out"
	else
		awk '/^(summary|totals):/ {print $2, 0; exit}' "$out"
	fi
}
read -r a am < <(totals 20)
read -r b bm < <(totals 220)
echo "$bench: $(((b - a) / 200)) instructions an iteration, $(((bm - am) / 200)) first-level data-cache read misses an iteration"
