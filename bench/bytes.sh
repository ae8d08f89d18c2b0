#!/usr/bin/env bash
# Bytes on the wire per answer and content coding (issue 21).
#
#   bench/bytes.sh [database]
#
# Starts the local ClickHouse unless EDGE_CH_ADDR is set, an edge on
# 127.0.0.1:18093 over the given database (default bench_100k), waits
# until its published answers are precompressed, and prints a Markdown
# table: each answer's bytes as they are and in gzip, br and zstd, with
# the level they were made at (best: precompressed at publish; fast: at
# the first request that asked for the coding). Loopback only.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
db=${1:-bench_100k}
secs=1 conns=1
. bench/lib.sh
bench_prepare
base=http://127.0.0.1:18093
bin/edge serve --ch-database "$db" --listen 127.0.0.1:18093 --log-level warn --no-limits \
  --editions-schedule off --ranks-schedule off &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
wait_ready 18093
for _ in $(seq 1 300); do
  curl -fs "$base/metrics" | grep -q '^edge_precompress_round_seconds_count [1-9]' && break
  sleep 1
done
listing=$(curl -fs "$base/api/v1/listings?store=chrome&limit=1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["listings"][0]["id"])')
script=$(curl -fs "$base/docs" | grep -o '/docs/redoc[^"]*\.js')
answers=(
  "/api/v1/listings" "/api/v1/listings?store=apple" "/api/v1/charts/chrome" "/api/v1/tags" "/api/v1/stores/chrome/stats"
  "/api/extensions?platform=0" "/api/summary" "/api/v1/openapi.json" "$script"
  "/api/v1/listings?sort=rating&limit=99" "/api/extensions?platform=4&sort=name&pageSize=200" "/api/extensions.csv?platform=1"
  "/api/v1/listings/chrome/$listing" "/api/v1/listings/chrome/$listing/history?days=365"
)
size() { curl -fs -o /dev/null -w '%{size_download}' -H "Accept-Encoding: $2" "$base$1"; }
echo "== bytes on the wire, $db, $(date -u +%FT%TZ)"
echo "| answer | identity | gzip | br | zstd | level |"
echo "|---|---|---|---|---|---|"
for a in "${answers[@]}"; do
  before=$(curl -fs "$base/metrics" | awk '/^edge_answer_cache_misses_total/ {print $2}')
  id=$(size "$a" identity)
  g=$(size "$a" gzip) b=$(size "$a" br) z=$(size "$a" zstd)
  after=$(curl -fs "$base/metrics" | awk '/^edge_answer_cache_misses_total/ {print $2}')
  lvl=best
  [ "$before" != "$after" ] && lvl=fast
  [ "$id" -lt 1024 ] && lvl="— (under 1 KiB)"
  awk -v a="$a" -v i="$id" -v g="$g" -v b="$b" -v z="$z" -v l="$lvl" 'BEGIN {
    printf "| `%s` | %d | %d (%.1f%%) | %d (%.1f%%) | %d (%.1f%%) | %s |\n", a, i, g, 100*g/i, b, 100*b/i, z, 100*z/i, l }'
done
