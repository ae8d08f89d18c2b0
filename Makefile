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
# ClickHouse server package (for `make run` and the integration tests),
# Varnish (for the CDN test), Node.js 20+ with the pinned MCP clients (for
# the tool server's tests) and the Go modules.
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
# FreeBSD, one target for both.
vet:
	$(GO) vet ./...
	GOOS=freebsd GOARCH=386 $(GO) vet ./...

# test is everything CI runs: formatting, vet, and every test with the race
# detector, against real ClickHouse servers the tests start themselves.
test: deps fmt-check vet
	EDGE_TEST_NODE_DIR=$$(deploy/node.sh) CI=$${CI:-true} $(GO) test -race -count=1 -timeout 20m ./...
	GOEXPERIMENT= $(GO) test -count=1 -run 'Text|Needle|Legacy|List|ScanKernels' ./views # the portable text scan and scan kernels
	GO=$(GO) deploy/fuzz.sh 20000x # every fuzz target, briefly (a count: see deploy/fuzz.sh)

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
