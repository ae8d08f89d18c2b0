#!/usr/bin/env bash
# Benchmark harness. Uses the local ClickHouse of deploy/clickhouse.sh (or
# EDGE_CH_ADDR), seeds the benchmark datasets once, and measures.
#
#   bench/run.sh foundation   seeder throughput, replica load time and memory at 100k and 1M listings
#   bench/run.sh go           the Go benchmarks (no ClickHouse needed)
#   bench/run.sh listings [DB]  uncached GET /api/v1/listings and /api/extensions over HTTP (bench_1m unless DB)
#   bench/run.sh 5m           seeds bench_5m (5M listings, 365 days, the stores' real shares)
#   bench/run.sh analysts [DB]  growth between dates, comparisons, the change feed (uncached, over HTTP) and a day's exports (bench_1m unless DB)
#
# Results go to bench/out/ and are summarized by hand in bench/README.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=bench/out
mkdir -p "$out"
GOEXPERIMENT=simd go build -o bin/edge ./cmd/edge

ch() {
  if [ -z "${EDGE_CH_ADDR:-}" ]; then deploy/clickhouse.sh start; export EDGE_CH_ADDR=127.0.0.1:19000; fi
}

# dataset NAME LISTINGS DAYS: seed database NAME once (fixed --end, so every run measures the same data).
# bench_100k and bench_1m keep the test spread over the stores they were first
# seeded with (--shares test), so their figures stay comparable; a new dataset
# (bench_5m, issue 20) takes the stores' real shares.
dataset() {
  local db=$1 n=$2 days=$3
  echo "== dataset $db: $n listings, $days days" | tee -a "$out/seed.txt"
  local shares=real
  case $db in bench_100k | bench_1m) shares=test ;; esac
  /usr/bin/time -f "seed wall %es, max RSS %MkB" bin/edge seed --ch-database "$db" --listings "$n" --days "$days" \
    --shares "$shares" --end 2026-11-01T00:00:00Z --if-empty 2>&1 | grep -v '^seed: ' | tee -a "$out/seed.txt"
}

case "${1:-foundation}" in
  foundation)
    ch
    dataset bench_100k 100000 365
    dataset bench_1m 1000000 365
    for db in bench_100k bench_1m; do
      echo "== replica load $db" | tee -a "$out/replica.txt"
      go run ./bench/replica --ch-addr "$EDGE_CH_ADDR" --ch-database "$db" --runs 3 | tee -a "$out/replica.txt"
    done
    ;;
  go)
    GOEXPERIMENT=simd go test -run '^$' -bench . -benchmem ./... | tee "$out/go-bench.txt"
    ;;
  5m)
    ch
    dataset bench_5m 5000000 365
    ;;
  listings)
    ch
    db=${2:-bench_1m}
    [ "$db" = bench_1m ] && dataset bench_1m 1000000 365
    bin/edge migrate --ch-database "$db" >/dev/null
    # Only the views: editions and ranks would share the CPU with the requests.
    EDGE_FAIR_USE_RATE=0 EDGE_ANON_PER_MINUTE=1000000000 EDGE_ANON_PER_DAY=1000000000000 EDGE_SEARCH_RATE=0 \
      bin/edge serve --ch-database "$db" --listen 127.0.0.1:18092 --log-level warn \
      --editions-schedule off --ranks-schedule off --cache-mb 1024 --no-limits &
    pid=$!
    trap 'kill $pid 2>/dev/null || true' EXIT
    for _ in $(seq 1 600); do
      if curl -fs 127.0.0.1:18092/readyz | grep -q '"figures":true'; then break; fi
      sleep 1
    done
    # The full load's job ends after it publishes (it collects the
    # replaced state and returns its pages): measure the edge after that.
    sleep 30
    echo "== uncached /api/v1/listings, $db, $(date -u +%FT%TZ)" | tee -a "$out/listings.txt"
    go run ./bench/listings --base http://127.0.0.1:18092 | tee -a "$out/listings.txt"
    # The same queries with other page sizes (49 and 99), so that each is
    # a miss again, asked in gzip or br: a miss's latency with its
    # compression (issue 21).
    echo "== uncached /api/v1/listings, Accept-Encoding: gzip, br, $db, $(date -u +%FT%TZ)" | tee -a "$out/listings.txt"
    go run ./bench/listings --base http://127.0.0.1:18092 --accept-encoding "gzip, br" --limits 49,99 | tee -a "$out/listings.txt"
    echo "== uncached /api/extensions, $db, $(date -u +%FT%TZ)" | tee -a "$out/listings.txt"
    go run ./bench/listings --legacy --base http://127.0.0.1:18092 | tee -a "$out/listings.txt"
    ;;
  analysts)
    ch
    db=${2:-bench_1m}
    [ "$db" = bench_1m ] && dataset bench_1m 1000000 365
    bin/edge migrate --ch-database "$db" >/dev/null
    EDGE_FAIR_USE_RATE=0 bin/edge serve --ch-database "$db" --listen 127.0.0.1:18092 --log-level warn \
      --editions-schedule off --ranks-schedule off --exports-schedule off --cache-mb 1024 --no-limits &
    pid=$!
    trap 'kill $pid 2>/dev/null || true' EXIT
    for _ in $(seq 1 600); do
      if curl -fs 127.0.0.1:18092/readyz | grep -q '"figures":true'; then break; fi
      sleep 1
    done
    sleep 30 # the full load's job ends after it publishes
    echo "== analysts' reads, uncached, $db, $(date -u +%FT%TZ)" | tee -a "$out/analysts.txt"
    go run ./bench/analysts --base http://127.0.0.1:18092 ${ANALYSTS_ONLY:+--only "$ANALYSTS_ONLY"} | tee -a "$out/analysts.txt"
    kill $pid
    [ -n "${ANALYSTS_ONLY:-}" ] && exit 0; wait $pid 2>/dev/null || true
    # A day's exports, built as the job does, with nothing else running.
    dir=$(mktemp -d)
    echo "== a day's exports, $db, $(date -u +%FT%TZ)" | tee -a "$out/analysts.txt"
    /usr/bin/time -f "export wall %es, max RSS %MkB" bin/edge export --ch-database "$db" --exports-dir "$dir" \
      --exports-grace 0s 2>&1 | tee -a "$out/analysts.txt"
    du -sb "$dir"/* | tee -a "$out/analysts.txt"
    rm -rf "$dir"
    ;;
  *) echo "usage: $0 foundation|go|listings [DB]|5m|analysts [DB]" >&2; exit 2 ;;
esac
