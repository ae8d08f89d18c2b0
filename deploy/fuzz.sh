#!/usr/bin/env bash
# Runs every Go fuzz target of the project for a while each.
#
#   deploy/fuzz.sh [budget per target]    (default 20000x; make fuzz FUZZTIME=10m)
#
# A budget is a time (10m) or a number of executions (20000x). make test
# uses a count: with a time, Go 1.26's fuzzing coordinator can fail a
# target with a bare "context deadline exceeded" as the time runs out
# (golang/go#75804, fixed in Go 1.27). Such a failure with no failing
# input written is reported as that flake, not as a finding.
#
# Each target's seed corpus is in its package's testdata/fuzz/<target>/
# and in its f.Add calls; what a run finds (a failing input) is written
# there by Go and fails the run. The list below is every parser of
# untrusted input: keep it in step with docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-20000x}
go=${GO:-go}
targets=(
	"./mcp FuzzToolCallsCountedOnce"
	"./edge/v1 FuzzListQuery"
	"./edge/v1 FuzzListCursor"
	"./edge/v1 FuzzReviewCursor"
	"./edge/v1 FuzzReviewSearchCursor"
	"./edge/legacy FuzzLegacyQuery"
	"./analytics FuzzParseSearchQuery"
	"./edge/access FuzzKeyHeaders"
	"./edge/clientip FuzzClientHeaders"
	"./edge/egress FuzzCheckURL"
	"./cron/leader FuzzMemberCheck"
	"./edge/account FuzzBasicCredentials"
	"./edge/account FuzzSignUpBody"
	"./views/textindex FuzzTextSearch"
	"./views/textindex FuzzNeedleMatches"
	"./analytics FuzzSplitJoined"
	"./edge/coding FuzzChoose"
	"./edge/answer FuzzAppendPageLink"
	"./edge/v1 FuzzParseListingRefs"
	"./edge/v1 FuzzSincePos"
	"./edge/v1 FuzzEventQuery"
	"./edge/v1 FuzzParseInstant"
	"./edge/transport FuzzFrame"
	"./views/replica FuzzReadSnapshot"
	"./views/replica FuzzReadDelta"
	"./edge/jsonw FuzzString"
	"./edge/jsonw FuzzFloat"
)
for t in "${targets[@]}"; do
	set -- $t
	# The targets need no ClickHouse: hide it, and let the packages that
	# start one for their other tests (TestMain) skip them, CI or not.
	out=$(env -u CI EDGE_TEST_CLICKHOUSE=off "$go" test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "$fuzztime" -parallel 2 2>&1) || {
		if grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written' <<<"$out"; then
			echo "$1 $2: the fuzzing coordinator's deadline flake (golang/go#75804), no failing input"
			continue
		fi
		echo "$out"
		echo "FAIL $1 $2"
		exit 1
	}
	execs=$(echo "$out" | grep -o 'execs: [0-9]*' | tail -1 | cut -d' ' -f2 || true)
	printf '%-16s %-28s %s execs (budget %s)\n' "$1" "$2" "${execs:-?}" "$fuzztime"
done
