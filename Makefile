# edge — the two commands are `make run` and `make test` (see README.md).

GO       ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN      := bin/edge
LISTINGS ?= 20000
DAYS     ?= 400

export PATH := $(dir $(GO)):$(PATH)
# Text search scans with AVX2 through Go's simd/archsimd package, which
# needs this experiment; builds without it use a portable scan (views/textscan*.go).
export GOEXPERIMENT ?= simd

.PHONY: all build run test deps vet fmt-check fuzz clickhouse clickhouse-stop cdn docker bench clean

all: build

build:
	$(GO) build -trimpath -o $(BIN) ./cmd/edge

# deps installs what the project needs on a fresh Debian machine: the
# ClickHouse server package (for `make run` and the integration tests), ZooKeeper (the cluster tests),
# Varnish (for the CDN test), Node.js 20+ with the pinned MCP clients (for
# the tool server's tests) and npm's chdb (a current ClickHouse release,
# for the test that replays the SQL on it), and the Go modules.
deps:
	deploy/deps.sh
	$(GO) mod download

# run: local ClickHouse unless EDGE_CH_ADDR points elsewhere -> schema ->
# demo dataset if the database is empty -> serve on 127.0.0.1:8080.
run: build
	@if [ -z "$$EDGE_CH_ADDR" ]; then deploy/clickhouse.sh start; fi
	$(BIN) migrate
	$(BIN) seed --if-empty --listings $(LISTINGS) --days $(DAYS)
	exec $(BIN) serve

# cdn runs Varnish (deploy/varnish.vcl) on 127.0.0.1:6081 in front of
# the edge of `make run`, in the foreground.
cdn:
	deploy/varnish.sh

clickhouse:
	deploy/clickhouse.sh start

clickhouse-stop:
	deploy/clickhouse.sh stop

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# vet also checks a build without the Linux and 64-bit fast paths (raw
# sendfile connections, AVX2 text scan, parent-death signals): 32-bit
# FreeBSD, one target for both. Every package builds there; the ones
# with files of their own for it (PLATFORM) and the binary are vetted.
PLATFORM := ./analytics/chtest ./bench/floor ./edge/stream ./edge/transport ./views/listq ./views/textindex ./cmd/edge
vet:
	@echo "== $$(date -u +%T) vet"
	$(GO) vet ./...
	GOOS=freebsd GOARCH=386 $(GO) build ./...
	GOOS=freebsd GOARCH=386 $(GO) vet $(PLATFORM)

# NORACE are the tests that check behaviour at scale in one goroutine's
# work (brute-force property checks of the listing query engine and the
# text index, the tool calls' counting over many bodies, the answer cache
# under 120,000 requests, the precompression of every published answer
# at the best level): they run in the race detector's pass at a tenth of
# its speed for nothing it can find, so they run in a pass of their own
# without it; so do the pages' audits in Chromium, whose time is the
# browser's. (What the race detector can find in precompression, rounds
# beside requests, TestPrecompressWhileAsked checks under it.)
# Every code path they take also runs under the race detector in other
# tests (docs/testing.md, Time).
NORACE := TestGramSearchMatchesBruteForce|TestLegacyMatchesBruteForce|TestTextSearchMatchesBruteForce|TestToolCallsCountOnceOverHTTP|TestJunkParametersDoNotEvictHotAnswers|TestPagesInChromium|TestPrecompressedOnPublish

# BESIDE are the tests of package edge that mostly wait on servers of
# their own (a cluster of three ClickHouse servers and ZooKeeper, its
# distributed DDL, a replica and ZooKeeper stopped: 178 s under the race
# detector, 143 s of it setting up). They run under the race detector
# beside the NORACE pass and the fuzz targets, not in edge's pass alone
# (whose fault and load tests time what they measure), nor beside the
# other packages' race pass (tried: that pass took 3 minutes longer, its
# own cluster test competing; docs/testing.md, Time).
BESIDE := TestClusterAnswersAsOneServer

# test is everything CI runs: formatting, vet, and every test (with the
# race detector but NORACE), against real ClickHouse servers the tests
# start themselves. Each pass says when it starts.
test: deps fmt-check vet
	@echo "== $$(date -u +%T) race pass: every package but edge"
	EDGE_TEST_NODE_DIR=$$(deploy/node.sh) CI=$${CI:-true} $(GO) test -race -count=1 -timeout 20m -skip '^($(NORACE))$$' $$($(GO) list ./... | grep -v '/edge/edge$$')
	@echo "== $$(date -u +%T) race pass: edge alone"
	EDGE_TEST_NODE_DIR=$$(deploy/node.sh) CI=$${CI:-true} $(GO) test -race -count=1 -timeout 20m -skip '^($(NORACE)|$(BESIDE))$$' ./edge # alone: its fault and load tests time what they measure (docs/testing.md, Time)
	@echo "== $$(date -u +%T) NORACE pass, with edge's $(BESIDE) beside it and the fuzz targets"
	@mkdir -p .var && rm -f .var/test-beside.status
	(EDGE_TEST_NODE_DIR=$$(deploy/node.sh) CI=$${CI:-true} $(GO) test -race -count=1 -timeout 20m -run '^($(BESIDE))$$' ./edge > .var/test-beside.log 2>&1; echo $$? > .var/test-beside.status) &
	EDGE_TEST_NODE_DIR=$$(deploy/node.sh) CI=$${CI:-true} $(GO) test -count=1 -timeout 10m -run '^($(NORACE))$$' ./edge ./views/...
	GOEXPERIMENT= $(GO) test -count=1 -run 'Text|Needle|Legacy|List|ScanKernels' ./views/textindex ./views/listq # the portable text scan and scan kernels
	@echo "== $$(date -u +%T) fuzz targets"
	GO=$(GO) deploy/fuzz.sh 10000x # every fuzz target, briefly (a count: see deploy/fuzz.sh; make fuzz for long runs)
	@echo "== $$(date -u +%T) waiting for $(BESIDE)"
	@while [ ! -s .var/test-beside.status ]; do sleep 2; done; cat .var/test-beside.log; exit $$(cat .var/test-beside.status)
	@echo "== $$(date -u +%T) make test passed"

# fuzz runs every fuzz target for FUZZTIME each (make fuzz FUZZTIME=10m).
FUZZTIME ?= 1m
fuzz:
	GO=$(GO) deploy/fuzz.sh $(FUZZTIME)

bench:
	bench/run.sh

docker:
	docker build -t edge:dev .

clean:
	rm -rf bin
