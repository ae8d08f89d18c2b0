#!/usr/bin/env bash
# Misses as analysts and dashboards ask them (issue 41): distinct uncached
# queries of both APIs, every sort and filter kind (bench/misses --mix
# dashboard), on this machine, loopback only, bounded runs.
#
#   bench/misses.sh [database] [seconds]
#
# Starts an edge on 127.0.0.1:18094 over the database (default bench_1m),
# trusting 127.0.0.1 as a proxy (so that X-Forwarded-For names callers),
# with no job but the views' (exports, editions and ranks off: their work
# would fall in the measurements), and measures, each for the given
# seconds (default 15):
#   1. misses alone from 1, 4, 8 and 16 connections, as fast as answered;
#   2. the same with the cached /api/summary asked beside them (wrk, 16
#      connections);
#   3. one caller flooding misses at 10x the best capacity of step 1 (at
#      16 connections one caller overflows its queue and keeps half the
#      turns, so that figure is not the edge's capacity), from 256
#      connections, paced, while another asks one a second: the other's
#      latency and refusals.
# BENCH_PIN=1 runs the edge on core 0 and the load generators on core 1
# (bench/lib.sh). Results go to bench/out/misses.txt. bench/overload.sh measures the
# cached answers while misses arrive at 10x capacity.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
db=${1:-bench_1m}
secs=${2:-15}
out=bench/out
mkdir -p "$out"
. bench/lib.sh
misses_prepare

misses_edge 18094 EDGE_TRUSTED_PROXIES=127.0.0.1/32

hits() { summary_hits 18094 "$1"; }
refused() { curl -fs 127.0.0.1:18094/metrics | awk '/^edge_miss_gate_refused_total/ {printf "%s ", $0} END {print ""}'; }

{
  echo "== misses (--mix dashboard): $db, $(date -u +%FT%TZ), $pin_mode, $(git rev-parse --short HEAD)"
  for c in 1 4 8 16; do
    echo "-- 1. misses alone, $c connections"
    "${gen_pin[@]}" bin/misses --base http://127.0.0.1:18094 --mix dashboard --conns "$c" --duration "${secs}s" --xff 198.51.100.1 | tee "$out/misses-$c.txt"
  done
  for c in 1 4 8 16; do
    echo "-- 2. misses, $c connections, with the cached /api/summary beside them"
    "${gen_pin[@]}" bin/misses --base http://127.0.0.1:18094 --mix dashboard --conns "$c" --duration "$((secs + 2))s" --xff 198.51.100.2 > "$out/misses-beside.txt" &
    m=$!
    sleep 1
    hits "$secs"
    wait "$m"
    cat "$out/misses-beside.txt"
  done
  capacity=$(awk '$1 == "200" {sub("/s", "", $3); if ($3 + 0 > c) c = $3 + 0} END {print c + 0}' "$out"/misses-{1,4,8,16}.txt)
  rate=$(awk -v c="$capacity" 'BEGIN {printf "%d", (c < 10 ? 10 : c) * 10}')
  echo "-- 3. one caller floods at $rate/s (10x $capacity/s), 256 connections; another asks one a second"
  "${gen_pin[@]}" bin/misses --base http://127.0.0.1:18094 --mix dashboard --conns 256 --rate "$rate" --duration "$((2 * secs + 2))s" --xff 198.51.100.3 > "$out/misses-flood.txt" &
  f=$!
  sleep 1
  echo "the other caller:"
  "${gen_pin[@]}" bin/misses --base http://127.0.0.1:18094 --mix dashboard --conns 1 --rate 1 --duration "$((2 * secs))s" --xff 203.0.113.9
  wait "$f"
  echo "the flood:"
  cat "$out/misses-flood.txt"
  echo "refused by the gate, since the start: $(refused)"
} 2>&1 | tee -a "$out/misses.txt"
