#!/usr/bin/env bash
# Overload: cached answers while distinct cache misses arrive faster than
# the edge can compute them (issue 22), on this machine, loopback only,
# bounded runs.
#
#   bench/overload.sh [database] [seconds]
#
# Starts an edge on 127.0.0.1:18093 over the database (default bench_1m)
# and measures, each for the given seconds (default 15):
#   1. the cached /api/summary alone (wrk -t1 -c16 --latency);
#   2. the edge's capacity for misses: distinct queries from 8
#      connections as fast as they are answered (bench/misses); one
#      caller's queue holds them all, so the gate never takes it to be
#      flooding (which would halve its turns);
#   3. both at once, the misses paced at 10x that capacity from 256
#      connections.
# Then the same three with the miss gate opened wide (EDGE_MISS_SHARE=64,
# a minute of waiting: every miss computed at once), as the edge was before
# the gate. OVERLOAD_RATE sets the misses' rate of step 3 instead of 10x
# the capacity, OVERLOAD_CONNS its connections instead of 256 (the gate
# holds each refusal 250 ms, so 256 connections send at most about 1,000
# refused misses a second: 5000 let the misses arrive at the rate asked). BENCH_PIN=1 runs the edge on core 0 and the load
# generators on core 1 (bench/lib.sh). Results go to bench/out/overload.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
db=${1:-bench_1m}
secs=${2:-15}
out=bench/out
mkdir -p "$out"
. bench/lib.sh
misses_prepare

hits() { summary_hits 18093 "$secs"; }

measure() {
  local label=$1
  shift
  misses_edge 18093 "$@"
  echo "== $label: $db, $(date -u +%FT%TZ), $pin_mode, $(git rev-parse --short HEAD)"
  echo "-- 1. cached /api/summary alone"
  hits
  echo "-- 2. misses alone, 8 connections, as fast as answered"
  "${gen_pin[@]}" bin/misses --base http://127.0.0.1:18093 --conns 8 --duration "${secs}s" | tee "$out/overload-capacity.txt"
  local capacity
  capacity=$(awk '$1 == "200" {sub("/s", "", $3); print $3}' "$out/overload-capacity.txt")
  local rate
  rate=${OVERLOAD_RATE:-$(awk -v c="$capacity" 'BEGIN {printf "%d", (c < 10 ? 10 : c) * 10}')}
  local conns=${OVERLOAD_CONNS:-256}
  echo "-- 3. cached /api/summary while misses arrive at $rate/s (10x $capacity/s), $conns connections"
  "${gen_pin[@]}" bin/misses --base http://127.0.0.1:18093 --conns "$conns" --rate "$rate" --duration "$((secs + 2))s" > "$out/overload-flood.txt" &
  local flood=$!
  sleep 1
  hits
  wait "$flood"
  cat "$out/overload-flood.txt"
  curl -fs 127.0.0.1:18093/metrics | grep '^edge_miss_gate' || true
  kill "$edge_pid"
  wait "$edge_pid" 2>/dev/null || true
  edge_pid=""
}

{
  measure "miss gate on (EDGE_MISS_SHARE=${OVERLOAD_SHARE:-default})" ${OVERLOAD_SHARE:+EDGE_MISS_SHARE=$OVERLOAD_SHARE}
  [ "${OVERLOAD_WIDE:-1}" = 1 ] && measure "miss gate opened wide (as before the gate)" EDGE_MISS_SHARE=64 EDGE_MISS_WAIT=1m EDGE_MISS_QUEUE=1000
} 2>&1 | tee -a "$out/overload.txt"
