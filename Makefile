# edge — the two commands are `make run` and `make test` (see README.md).

GO       ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN      := bin/edge
LISTINGS ?= 20000
DAYS     ?= 400

export PATH := $(dir $(GO)):$(PATH)
# Text search scans with AVX2 through Go's simd/archsimd package, which
# needs this experiment; builds without it use a portable scan (views/textscan*.go).
export GOEXPERIMENT ?= simd
# Builds that do not depend on where the clone is: a fresh clone (CI's,
# or a second worktree) reuses the build cache's compiled packages.
export GOFLAGS ?= -trimpath

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

# test is everything CI runs: formatting, vet, and every test (with the
# race detector but the NORACE tests), against real ClickHouse servers the
# tests start themselves, in three lanes that share the cores by priority
# (deploy/test.sh: what runs where, and why; docs/testing.md, Time).
test: deps fmt-check vet
	GO=$(GO) deploy/test.sh

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
