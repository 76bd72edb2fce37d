#!/usr/bin/env bash
# fuzz-long.sh: run every fuzz target of the module for longer than .ci/run does, one after another, and
# report each target's time, executions and result.
#
#   bench/fuzz-long.sh                 every target, 60s each, one fuzzing worker
#   FUZZTIME=20s bench/fuzz-long.sh    a shorter round
#   FUZZ_WORKERS=2 bench/fuzz-long.sh  more workers (the machine is shared: keep it small)
#   FUZZ_MINIMIZE=60s bench/fuzz-long.sh  go's default minimization budget per input (see below)
#   bench/fuzz-long.sh Envfile         only targets whose package or name matches the regexp
#
# A crasher is written by `go test -fuzz` to <package>/testdata/fuzz/<Target>/<hash>. That file is the
# regression test: plain `go test` runs it as a seed from then on. The script lists every new one at the end
# and exits 1; commit them together with the fix.
#
# Every input that reaches new code is minimised before fuzzing goes on, by default for up to 60s each:
# in a 20s round one such input can take the whole round (the progress lines then show 0 execs/sec). The
# script bounds minimisation to FUZZ_MINIMIZE (default 5s) so a round is spent mostly fuzzing.
set -u -o pipefail

fuzztime=${FUZZTIME:-60s}
workers=${FUZZ_WORKERS:-1}
minimize=${FUZZ_MINIMIZE:-5s}
only=${1:-.}

cd "$(dirname "$0")/.." || exit 2
logdir=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-long.XXXXXX")

targets=()
for pkg in $(go list ./...); do
	for fn in $(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz'); do
		if [[ "$pkg $fn" =~ $only ]]; then
			targets+=("$pkg $fn")
		fi
	done
done
if [ ${#targets[@]} -eq 0 ]; then
	echo "no fuzz targets match $only" >&2
	exit 2
fi

echo "fuzzing ${#targets[@]} targets for $fuzztime each with $workers worker(s), minimising for at most $minimize; logs in $logdir"
printf '%-32s %-22s %10s %14s  %s\n' package target time execs result
failed=0
crashers=()
start_all=$(date +%s)
for t in "${targets[@]}"; do
	pkg=${t% *}
	fn=${t#* }
	log="$logdir/$(basename "$pkg")-$fn.log"
	start=$(date +%s)
	for attempt in 1 2; do
		go test -run '^$' -fuzz "^${fn}\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" -parallel "$workers" "$pkg" >"$log" 2>&1
		rc=$?
		# Go 1.26's coordinator can fail a target with a bare "context deadline exceeded" at the end of
		# -fuzztime when a worker is slow to stop (golang/go#75804, fixed in 1.27): no input is written and
		# nothing reproduces. Run such a target once more rather than report a crash that is not there.
		if [ $rc -ne 0 ] && ! grep -q 'Failing input written\|seed corpus entry' "$log" && grep -q 'context deadline exceeded' "$log"; then
			cp "$log" "$log.deadline-$attempt"
			result="deadline race twice, no input (golang/go#75804)"
			continue
		fi
		break
	done
	secs=$(($(date +%s) - start))
	# The last progress line holds the total: "fuzz: elapsed: 20s, execs: 123456 (6172/sec), ...".
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	if [ $rc -eq 0 ]; then
		result=ok
		[ -e "$log.deadline-1" ] && result="ok (rerun after a deadline race)"
	elif seed=$(sed -n 's/.*failure while testing seed corpus entry: \(.*\)/\1/p' "$log" | head -1) && [ -n "$seed" ]; then
		# A committed (or left) crasher that still fails: the bug it records is not fixed yet.
		result="FAIL: seed $seed still fails"
		failed=$((failed + 1))
	elif grep -q 'Failing input written' "$log"; then
		result="FAIL (see $log)"
		failed=$((failed + 1))
		while read -r f; do
			crashers+=("$f")
		done < <(sed -n 's/.*Failing input written to \(testdata\/fuzz\/[^ ]*\).*/\1/p' "$log" |
			sed "s|^|$(go list -f '{{.Dir}}' "$pkg")/|")
	elif [ -e "$log.deadline-2" ]; then
		: # both attempts hit the coordinator race; result says so, not counted as a failure
	else
		result="FAIL (see $log)"
		failed=$((failed + 1))
	fi
	printf '%-32s %-22s %9ss %14s  %s\n' "${pkg#runwatch/}" "$fn" "$secs" "${execs:-?}" "$result"
done
echo "total: ${#targets[@]} targets, $(($(date +%s) - start_all))s, $failed failed"
if [ ${#crashers[@]} -gt 0 ]; then
	echo "new crashers (now regression seeds; fix the bug, then commit them):"
	printf '  %s\n' "${crashers[@]}"
fi
[ $failed -eq 0 ]
