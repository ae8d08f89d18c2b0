#!/usr/bin/env bash
# Runs every Go fuzz target of the project for a while each.
#
#   deploy/fuzz.sh [budget per target]    (default 10000x; make fuzz FUZZTIME=10m)
#
# make fuzz runs it (make test runs each target on its seed corpus and
# found inputs only, as a test: deploy/test.sh). A budget is a time (10m)
# or a number of executions (10000x, a quick pass of every target in
# about two minutes). With a time, Go 1.26's fuzzing coordinator can fail a
# target with a bare "context deadline exceeded" as the time runs out
# (golang/go#75804, fixed in Go 1.27). Such a failure with no failing
# input written is reported as that flake, not as a finding.
#
# The targets run in two lanes at once (LANES), each target with two
# workers: much of a target's time is its start (linking its binary,
# the coordinator, the seed corpus), which the other lane's work fills.
# A target's third field divides a count budget: the costliest per
# execution run a fraction of it (a time budget is never divided).
#
# Each target's seed corpus is in its package's testdata/fuzz/<target>/
# and in its f.Add calls; what a run finds (a failing input) is written
# there by Go and fails the run. The list below is every parser of
# untrusted input: keep it in step with docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-10000x}
go=${GO:-go}
targets=(
	"./mcp FuzzToolCallsCountedOnce /20"
	"./edge/v1 FuzzListQuery /20"
	"./edge/v1 FuzzListCursor"
	"./edge/v1 FuzzReviewCursor"
	"./edge/v1 FuzzReviewSearchCursor"
	"./edge/legacy FuzzLegacyQuery"
	"./analytics FuzzParseSearchQuery"
	"./edge/access FuzzKeyHeaders"
	"./edge/clientip FuzzClientHeaders"
	"./edge/egress FuzzCheckURL"
	"./fleet/leader FuzzMemberCheck"
	"./edge/account FuzzBasicCredentials"
	"./edge/account FuzzSignUpBody"
	"./views/textindex FuzzTextSearch /4"
	"./views/textindex FuzzNeedleMatches"
	"./analytics FuzzSplitJoined"
	"./edge/coding FuzzChoose"
	"./edge/accept FuzzQuality"
	"./edge/answer FuzzAppendPageLink"
	"./edge/v1 FuzzParseListingRefs"
	"./edge/v1 FuzzSincePos"
	"./edge/v1 FuzzEventQuery"
	"./edge/v1 FuzzParseInstant"
	"./edge/transport FuzzFrame"
	"./views/replica FuzzReadSnapshot"
	"./views/replica FuzzReadDelta"
	"./internal/jsonw FuzzString"
	"./internal/jsonw FuzzFloat"
	"./internal/csvw FuzzText"
	"./edge/read FuzzPick"
	"./edge/listargs FuzzShared"
	"./edge/byterange FuzzParse"
)
lanes=${LANES:-2}

# fuzz runs one target ($1 package, $2 name, $3 optional divisor) and
# prints one line; it returns non-zero on a finding.
fuzz() {
	local budget=$fuzztime
	if [[ -n ${3:-} && $budget == *x ]]; then
		budget=$((${budget%x} / ${3#/}))x
	fi
	local start=$SECONDS out
	# The targets need no ClickHouse: hide it, and let the packages that
	# start one for their other tests (TestMain) skip them, CI or not.
	out=$(env -u CI EDGE_TEST_CLICKHOUSE=off "$go" test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "$budget" -parallel 2 2>&1) || {
		if grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written' <<<"$out"; then
			echo "$1 $2: the fuzzing coordinator's deadline flake (golang/go#75804), no failing input"
			return 0
		fi
		echo "$out"
		echo "FAIL $1 $2"
		return 1
	}
	local execs
	execs=$(echo "$out" | grep -o 'execs: [0-9]*' | tail -1 | cut -d' ' -f2 || true)
	printf '%-16s %-28s %s execs (budget %s) in %d s\n' "$1" "$2" "${execs:-?}" "$budget" $((SECONDS - start))
}

# lane runs every lanes-th target from the k-th.
lane() {
	local k=$1 i
	for ((i = k; i < ${#targets[@]}; i += lanes)); do
		fuzz ${targets[i]} || return 1
	done
}

pids=()
for ((k = 0; k < lanes; k++)); do
	lane $k &
	pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do
	wait "$pid" || failed=1
done
exit $failed
