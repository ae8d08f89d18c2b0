#!/usr/bin/env bash
# The soak (issue 22): mixed traffic for a while against an edge at 1M
# listings (bench/soak: cached answers, 304s, distinct misses, histories,
# reviews and tool calls, each paced), with the local ClickHouse
# restarted every 5 minutes, one full reload (SIGHUP) and one
# replacement of the edge process (SIGUSR2) on the way. Loopback only,
# bounded.
#
#   bench/soak.sh [database] [minutes]
#
# Writes bench/out/soak.csv (a row every 10 s), bench/out/soak-summary.txt
# and docs/soak.svg (the plot). Uses the local ClickHouse of
# deploy/clickhouse.sh (it is restarted: not for a shared one).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
db=${1:-bench_1m}
minutes=${2:-30}
out=bench/out
mkdir -p "$out"
[ -n "${EDGE_CH_ADDR:-}" ] && { echo "soak.sh restarts the local ClickHouse: unset EDGE_CH_ADDR" >&2; exit 2; }
deploy/clickhouse.sh start
export EDGE_CH_ADDR=127.0.0.1:19000
GOEXPERIMENT=simd go build -o bin/edge ./cmd/edge
go build -o bin/soak ./bench/soak
bin/edge migrate --ch-database "$db" >/dev/null
pidfile=$out/soak.pid events=$out/soak-events.txt log=$out/soak-edge.log
: > "$events"
EDGE_FAIR_USE_RATE=0 EDGE_ANON_PER_MINUTE=1000000000 EDGE_ANON_PER_DAY=1000000000000 EDGE_SEARCH_RATE=0 \
  bin/edge serve --ch-database "$db" --listen 127.0.0.1:18096 --log-format json --log-level info \
  --editions-schedule off --ranks-schedule off --cache-mb 256 > "$log" 2>&1 &
echo $! > "$pidfile"
cleanup() { kill "$(cat "$pidfile")" 2>/dev/null || true; deploy/clickhouse.sh start >/dev/null 2>&1 || true; }
trap cleanup EXIT
. bench/lib.sh
wait_ready 18096
for _ in $(seq 1 120); do curl -fs 127.0.0.1:18096/metrics | grep -q '^edge_precompress_round_seconds_count [1-9]' && break; sleep 1; done
start=$(date +%s)
event() { echo "$(date +%s) $1" >> "$events"; echo "soak: $(( ($(date +%s) - start) / 60 )) min: $1"; }
bin/soak --base 127.0.0.1:18096 --duration "${minutes}m" --pid-file "$pidfile" --events "$events" &
soak=$!
at() { local until=$((start + $1)); while [ "$(date +%s)" -lt "$until" ]; do sleep 1; done; }
for m in $(seq 5 5 $((minutes - 1))); do
  # A full reload at 12 minutes and a replacement at 17 (of 30), between
  # ClickHouse restarts.
  if [ "$m" = 15 ]; then
    at $((12 * 60)); event "full reload (SIGHUP)"; kill -HUP "$(cat "$pidfile")"
  fi
  if [ "$m" = 20 ]; then
    at $((17 * 60)); event "edge replaced (SIGUSR2)"; old=$(cat "$pidfile"); kill -USR2 "$old"
    # The new process's pid, once the old one hands over.
    for _ in $(seq 1 600); do
      new=$(grep -o '"the new process answers: stopping this one","pid":[0-9]*' "$log" | tail -1 | grep -o '[0-9]*$' || true)
      [ -n "$new" ] && { echo "$new" > "$pidfile"; event "new edge process $new answers"; break; }
      sleep 1
    done
  fi
  at $((m * 60))
  t0=$(date +%s)
  deploy/clickhouse.sh stop >/dev/null 2>&1
  deploy/clickhouse.sh start >/dev/null 2>&1
  echo "$t0 ClickHouse restarted ($(($(date +%s) - t0)) s down)" >> "$events"
  echo "soak: $(( (t0 - start) / 60 )) min: ClickHouse restarted"
done
wait "$soak"
cat "$out/soak-summary.txt"
echo "edge log errors: $(grep -c '"level":"ERROR"' "$log" || true)"
