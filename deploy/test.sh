#!/usr/bin/env bash
# Runs every test of `make test` (after its deps, fmt and vet), in steps
# that keep the machine's cores busy without one test's timing bending
# another's:
#
#   1. every package but edge under the race detector (two at a time);
#   2. package edge under the race detector, alone at normal priority:
#      its fault and load tests time what they measure;
#   3. the CLUSTER tests, without it, beside what the background lane
#      has left; then the PROCESSES test under the race detector, alone.
#
# Beside step 2, a background lane runs what times nothing: the NORACE
# tests and the portable text scan. It runs under SCHED_IDLE (chrt
# --idle), so it takes only the CPU step 2 leaves (it waits on its
# servers and clients a third of its time) and gives it back as soon as
# step 2 wants it: at nice 19 instead, step 2 took 30% longer (its
# requests waited for the scheduler's turn). Even so it still slows
# step 2 by about a fifth (docs/testing.md, Time).
#
# The fuzz targets run here on their seed corpora and the inputs they
# found, as every test does (package testdata/fuzz/); fuzzing for new
# inputs is make fuzz (deploy/fuzz.sh), which does not fit CI's 15
# minutes on two cores beside everything else (docs/testing.md, Time).
#
# The background lane's log is in .var/test/ and printed at the end.
# The script fails if any step or lane does.
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
# 20,000 generated listings, the linking of twin listings over 120,000,
# the replica's property tests (chains of deltas against the whole state,
# packs, lazy lists against bitmaps), recent answers against the search,
# growth, sparklines and daily ranks against SQL over every listing,
# the loads' memory on ClickHouse's side under a query cap (60,000
# listings seeded: 65 s under the race detector, 28 s without),
# and the HTTP tests that walk every route, page, sort or listing one
# request at a time: the OpenAPI description against every answer, the
# crawl of 500 pages, every route's replay, every sort to its end, the
# pages' counts against their JSON, one rank in every listing's document
# and history, a review search over 50,000 listings):
# they run in the race detector's pass at a tenth of its speed for
# nothing it can find, so they run in a pass of their own without it; so
# do the tests whose time is a browser's (the pages' audits, a listing's
# page, the docs and a page of another origin in Chromium) or Node's (the
# TypeScript MCP clients, the OpenAPI description's linters and Dredd's
# replay of it). (What
# the race detector can find in precompression, rounds beside requests,
# TestPrecompressWhileAsked checks under it.) Every code path they take
# also runs under the race detector in other tests (docs/testing.md,
# Time).
NORACE_EDGE='TestToolCallsCountOnceOverHTTP|TestJunkParametersDoNotEvictHotAnswers|TestPagesInChromium|TestPrecompressedOnPublish|TestListingPageInChromium|TestDocsRenderInChromium|TestCrossOriginPageInChromium|TestToolServerWithTheTypeScriptClients|TestOpenAPILintsClean|TestDreddReplaysTheDescription|TestOpenAPIDescribesLiveAnswers|TestCrawlFromHome|TestEveryRouteReplaysTheFullPathsBytes|TestCountPagesEqualTheirJSON|TestEverySortListsEveryListing|TestReviewSearchInALargeCategory|TestOneRankInDocumentAndHistory'
NORACE_OTHERS='TestGramSearchMatchesBruteForce|TestLegacyMatchesBruteForce|TestTextSearchMatchesBruteForce|TestHistoriesHaveEveryKindOfChange|TestLinkingPrecisionRecall|TestChainOfDeltasIsTheWholeState|TestDeltaHoldsWhatChanged|TestPackHoldsEveryOwnValue|TestPackKeepsWhatIsStillUsed|TestListLazyAndBitmapAgree|TestRecentAnswersAsTheSearch|TestGrowthAndSparklinesMatchSQL|TestDailyRanksMatchReadings|TestLoadsInBoundedMemory'
NORACE="$NORACE_EDGE|$NORACE_OTHERS"

# CLUSTER are the tests on a cluster of ClickHouse servers and ZooKeeper
# (its distributed DDL, the loads and answers over it, a replica, a shard
# and ZooKeeper stopped, a replica added). What they add to the other
# tests is ClickHouse's topology, not Go's concurrency: every code path
# they take runs under the race detector over one server. They run
# without it, in step 3 (not beside step 1 or 2, whose tests they would
# slow, and whose timed tests they would bend).
CLUSTER_ANALYTICS='TestSchemaAndLoadsOnACluster'
BESIDE='TestClusterAnswersAsOneServer'

# PROCESSES is the test of three edge processes (the race-built test
# binary) of one fleet, with ZooKeeper and ClickHouse, through kills, a
# SIGSTOP and a silent cut: about 40 s of the busiest cores of the suite.
# In step 1 it ran beside whatever package had the other slot, and
# fleet/exchange's tests beside it timed out (issue 74). It runs in step
# 3, after the cluster tests, with only the SCHED_IDLE background lane
# beside it.
PROCESSES='TestFleetHoldsThroughProcessFaults'

logs=.var/test
mkdir -p "$logs"
rm -f "$logs"/*.log

stamp() { echo "== $(date -u +%T) $*"; }

# lane_background is what times nothing.
lane_background() {
	local rc=0
	stamp "NORACE pass of the other packages"
	"$go" test -count=1 -timeout 10m -run "^($NORACE_OTHERS)\$" ./views/... ./analytics ./analytics/seed ./analytics/memload || rc=1
	stamp "NORACE pass: edge"
	"$go" test -count=1 -timeout 10m -run "^($NORACE_EDGE)\$" ./edge || rc=1
	stamp "the portable text scan and scan kernels"
	GOEXPERIMENT= "$go" test -count=1 -run 'Text|Needle|Legacy|List|ScanKernels' ./views/textindex ./views/listq || rc=1
	return $rc
}

# lane_beside is the CLUSTER tests and the PROCESSES test (step 3).
lane_beside() {
	local rc=0
	"$go" test -count=1 -timeout 20m -run "^($BESIDE)\$" ./edge || rc=1
	"$go" test -count=1 -timeout 10m -run "^($CLUSTER_ANALYTICS)\$" ./analytics || rc=1
	"$go" test -race -count=1 -timeout 10m -run "^($PROCESSES)\$" ./cmd/edge || rc=1
	return $rc
}

# run starts lane $1 in the background, its output to its log; under
# SCHED_IDLE when $2 is "idle".
declare -A pid lane_start
run() {
	local name=$1 policy=${2:-}
	lane_start[$name]=$SECONDS
	(
		if [[ $policy == idle ]]; then
			chrt --idle -p 0 $BASHPID >/dev/null
		fi
		"lane_$name"
	) >"$logs/$name.log" 2>&1 &
	pid[$name]=$!
}

failed=()
# step runs one step in the foreground, saying how long it took.
step() {
	local what=$1 start=$SECONDS
	shift
	stamp "$what"
	if "$@"; then
		echo "== $what: passed in $((SECONDS - start)) s"
	else
		echo "== $what: FAILED in $((SECONDS - start)) s"
		failed+=("$what")
	fi
}

# The packages every race pass builds on, built once before two passes
# would build them side by side (a moment with a warm build cache).
step "building the race detector's packages" "$go" build -race ./...
# shellcheck disable=SC2046
step "race pass: every package but edge" "$go" test -race -count=1 -timeout 20m -skip "^($NORACE|$CLUSTER_ANALYTICS|$PROCESSES)\$" $("$go" list ./... | grep -v '/edge/edge$')
run background idle
step "race pass: edge" "$go" test -race -count=1 -timeout 20m -skip "^($NORACE|$BESIDE)\$" ./edge
step "the cluster tests" lane_beside

for name in background; do
	status=0
	wait "${pid[$name]}" || status=$?
	echo
	echo "==== lane $name: $( ((status == 0)) && echo passed || echo FAILED) in $((SECONDS - lane_start[$name])) s"
	cat "$logs/$name.log"
	if ((status != 0)); then failed+=("$name"); fi
done
echo
if ((${#failed[@]} > 0)); then
	stamp "make test FAILED: ${failed[*]}"
	exit 1
fi
stamp "make test passed"
