#!/usr/bin/env bash
# The cost of keys and limits on a cached answer: the same answer from an
# edge without limits (--no-limits), and from an edge with them, called
# without a key (per-address accounting) and with a key (hash check plus
# per-key accounting), measured with wrk in alternating rounds.
#
#   bench/access.sh [database] [seconds] [rounds]
#
# Limits are raised far above what wrk sends, so every call is admitted
# and does the full work: key check, minute window, day count, headers.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
db=${1:-bench_100k}
secs=${2:-10}
rounds=${3:-3}
conns=${WRK_CONNECTIONS:-64}
path=${BENCH_PATH:-/api/v1/categories/chrome}
out=bench/out
mkdir -p "$out"

. bench/lib.sh
bench_prepare

pids=()
tmpout=$(mktemp)
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -f "$tmpout"; }
trap cleanup EXIT
common=(--ch-database "$db" --log-level warn --editions-schedule off --ranks-schedule off)
bin/edge serve "${common[@]}" --listen 127.0.0.1:18093 --no-limits & pids+=($!)
EDGE_ANON_PER_MINUTE=1000000000 EDGE_ANON_PER_DAY=1000000000000 EDGE_KEY_PER_MINUTE=1000000000 \
  bin/edge serve "${common[@]}" --listen 127.0.0.1:18094 & pids+=($!)

email="bench-$(date +%s)@example.com"
echo "a bench password" | bin/edge account create --ch-database "$db" --email "$email" >/dev/null
key=$(bin/edge key create --ch-database "$db" --email "$email" 2>/dev/null)
id=${key%_*}
bin/edge key limit --ch-database "$db" --id "$id" --daily 1000000000000 >/dev/null

wait_ready 18093
wait_ready 18094
# The key works once the edge's key list has reloaded.
for _ in $(seq 1 60); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" "127.0.0.1:18094$path")" = 200 ] && break
  sleep 1
done
curl -s -D - -o /dev/null -H "Authorization: Bearer $key" "127.0.0.1:18094$path" | grep -i '^ratelimit-policy' >&2

{
  echo "== keys and limits on a cached answer ($path), wrk -t2 -c$conns -d${secs}s, $rounds rounds, database $db, $(date -u +%FT%TZ)"
  for r in $(seq 1 "$rounds"); do
    wrk_run "round $r  no limits" "http://127.0.0.1:18093$path"
    wrk_run "round $r  limits, no key" "http://127.0.0.1:18094$path"
    wrk_run "round $r  limits, Bearer key" "http://127.0.0.1:18094$path" -H "Authorization: Bearer $key"
  done
} | tee "$tmpout"
# Medians per variant, against the edge without limits.
medians "no limits" < "$tmpout" | tee -a "$tmpout"
cat "$tmpout" >> "$out/access.txt"
