#!/usr/bin/env bash
# Runs every test of `make test` (after its deps, fmt and vet) in three
# lanes at once that share the machine's cores by priority:
#
#   edge    package edge under the race detector, then the NORACE tests
#           without it; at normal priority: its fault and load tests
#           time what they measure, so this lane has first claim on the
#           CPU and runs as it would alone.
#   others  every other package under the race detector, then BESIDE;
#           at nice 10, taking what the edge lane leaves (the edge lane
#           waits on its servers and clients for a third of its time).
#   fuzz    every fuzz target, briefly (deploy/fuzz.sh); at nice 19,
#           taking only what both leave.
#
# Each lane writes its log to .var/test/LANE.log; a lane's log is printed
# when it ends, with how long it took. The script fails if any lane does.
#
#   GO=go deploy/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
go=${GO:-go}
export GO=$go CI=${CI:-true}
EDGE_TEST_NODE_DIR=$(deploy/node.sh)
export EDGE_TEST_NODE_DIR

# NORACE are the tests that check behaviour at scale in one goroutine's
# work (brute-force property checks of the listing query engine and the
# text index, the tool calls' counting over many bodies, the answer cache
# under 120,000 requests, the precompression of every published answer
# at the best level, the seeded data's shares of each kind of change over
# 20,000 generated listings, the linking of twin listings over 120,000):
# they run in the race detector's pass at a tenth of its speed for
# nothing it can find, so they run in a pass of their own without it; so
# do the pages' audits in Chromium, whose time is the browser's. (What
# the race detector can find in precompression, rounds beside requests,
# TestPrecompressWhileAsked checks under it.) Every code path they take
# also runs under the race detector in other tests (docs/testing.md,
# Time).
NORACE='TestGramSearchMatchesBruteForce|TestLegacyMatchesBruteForce|TestTextSearchMatchesBruteForce|TestToolCallsCountOnceOverHTTP|TestJunkParametersDoNotEvictHotAnswers|TestPagesInChromium|TestPrecompressedOnPublish|TestHistoriesHaveEveryKindOfChange|TestLinkingPrecisionRecall'
NORACE_PKGS='./edge ./views/... ./analytics/seed ./analytics/memload'

# BESIDE are the tests of package edge that mostly wait on servers of
# their own (a cluster of three ClickHouse servers and ZooKeeper, its
# distributed DDL, a replica and ZooKeeper stopped): they run under the
# race detector in the others lane, after that lane's packages (whose own
# cluster test would compete with it for the cores), not in the edge lane.
BESIDE='TestClusterAnswersAsOneServer'

logs=.var/test
mkdir -p "$logs"
rm -f "$logs"/*.log

stamp() { echo "== $(date -u +%T) $*"; }

lane_edge() {
	stamp "race pass: edge"
	"$go" test -race -count=1 -timeout 20m -skip "^($NORACE|$BESIDE)\$" ./edge
	stamp "NORACE pass"
	# shellcheck disable=SC2086
	"$go" test -count=1 -timeout 10m -run "^($NORACE)\$" $NORACE_PKGS
	stamp "the portable text scan and scan kernels"
	GOEXPERIMENT= "$go" test -count=1 -run 'Text|Needle|Legacy|List|ScanKernels' ./views/textindex ./views/listq
}

lane_others() {
	stamp "race pass: every package but edge"
	# shellcheck disable=SC2046
	"$go" test -race -count=1 -timeout 20m -skip "^($NORACE)\$" $("$go" list ./... | grep -v '/edge/edge$')
	stamp "race pass: $BESIDE"
	"$go" test -race -count=1 -timeout 20m -run "^($BESIDE)\$" ./edge
}

lane_fuzz() {
	stamp "fuzz targets"
	# Every fuzz target, briefly: a count, see deploy/fuzz.sh (make fuzz
	# for long runs).
	deploy/fuzz.sh 10000x
}

# run starts lane $1 at niceness $2 in the background, its output to its
# log, and records its pid.
declare -A pid lane_start
run() {
	local name=$1 niceness=$2
	lane_start[$name]=$SECONDS
	(
		renice -n "$niceness" -p $BASHPID >/dev/null
		ionice -c 2 -n $((niceness * 7 / 19)) -p $BASHPID 2>/dev/null || true
		"lane_$name"
	) >"$logs/$name.log" 2>&1 &
	pid[$name]=$!
}

stamp "tests in three lanes: edge, others (nice 10), fuzz (nice 19); logs in $logs"
run edge 0
run others 10
run fuzz 19

failed=()
left=${#pid[@]}
while ((left > 0)); do
	status=0
	wait -n -p done "${pid[@]}" || status=$?
	for name in "${!pid[@]}"; do
		if [[ ${pid[$name]} == "$done" ]]; then
			echo
			echo "==== lane $name: $( ((status == 0)) && echo passed || echo FAILED) in $((SECONDS - lane_start[$name])) s"
			cat "$logs/$name.log"
			if ((status != 0)); then failed+=("$name"); fi
			unset "pid[$name]"
		fi
	done
	left=${#pid[@]}
done
echo
if ((${#failed[@]} > 0)); then
	stamp "make test FAILED in lanes: ${failed[*]}"
	exit 1
fi
stamp "make test passed"
