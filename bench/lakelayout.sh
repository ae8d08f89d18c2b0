#!/usr/bin/env bash
# Measures the readings' layout (issue 77) at bench_5m's size without
# seeding it: bench/lakesynth writes a synthetic readings file of a large
# store (1,000,000 package names with shared prefixes, up to 365 days
# each: about 304 M rows, the size of bench_5m's googleplay file) in each
# layout given, then reports its size and the writer's peak RSS, what
# hyparquet fetches over HTTP (bench/lakeserve) for two listings'
# histories with the page index on, and what a reader without a page
# index (DuckDB) reads: the footer and the row group's column chunks.
#
#   bench/lakelayout.sh [rows-per-group:page-bytes ...]
#     (default 2000000:65536 1000000:8192, the layout and the one before)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${LISTINGS:=1000000}"
out=bench/out/lakelayout
mkdir -p "$out"
go build -o bin/lakesynth ./bench/lakesynth
go build -o bin/lakeserve ./bench/lakeserve
node=$(deploy/node.sh)/node
bin/lakeserve --dir "$out" --listen 127.0.0.1:18491 2>"$out/lakeserve.log" &
srv=$!
trap 'kill $srv 2>/dev/null' EXIT
sleep 1
for layout in "${@:-2000000:65536 1000000:8192}"; do
  for l in $layout; do
    group=${l%%:*} page=${l##*:} file=$out/readings-$group-$page.parquet
    echo "== $group rows a group, pages of $page bytes"
    /usr/bin/time -f "writer: wall %es, max RSS %MkB" bin/lakesynth -listings "$LISTINGS" -group "$group" -page "$page" \
      -out "$file" -ids "$out/ids.txt" 2>&1 | tail -2
    for id in $(cat "$out/ids.txt"); do
      (cd edge/testdata/lake && "$node" hyparquet.mjs "http://127.0.0.1:18491/$(basename "$file")" none "$id" id,day,size,rating,rank) |
        python3 -c 'import json,sys; r=json.load(sys.stdin); print("hyparquet:", len(r["rows"]), "days;", r["requests"], "requests,", r["bytes"], "bytes")'
      bin/lakesynth -out "$file" -chunks "$id" | sed 's/^/no page index: /'
    done
    rm -f "$file"
  done
done
