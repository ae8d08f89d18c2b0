#!/usr/bin/env bash
# Runs every Go fuzz target of the project for a while each.
#
#   deploy/fuzz.sh [time per target]      (default 2s; make fuzz FUZZTIME=10m)
#
# Each target's seed corpus is in its package's testdata/fuzz/<target>/
# and in its f.Add calls; what a run finds (a failing input) is written
# there by Go and fails the run. The list below is every parser of
# untrusted input: keep it in step with docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-2s}
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
	"./edge/account FuzzBasicCredentials"
	"./edge/account FuzzSignUpBody"
)
for t in "${targets[@]}"; do
	set -- $t
	# The targets need no ClickHouse: hide it, and let the packages that
	# start one for their other tests (TestMain) skip them, CI or not.
	out=$(env -u CI EDGE_TEST_CLICKHOUSE=off "$go" test "$1" -run '^$' -fuzz "^$2\$" -fuzztime "$fuzztime" -parallel 2 2>&1) || {
		echo "$out"
		echo "FAIL $1 $2"
		exit 1
	}
	execs=$(echo "$out" | grep -o 'execs: [0-9]*' | tail -1 | cut -d' ' -f2 || true)
	printf '%-16s %-28s %s execs in %s\n' "$1" "$2" "${execs:-?}" "$fuzztime"
done
