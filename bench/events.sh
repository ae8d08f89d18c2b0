#!/usr/bin/env bash
# The change events of issue 42 at 1M listings, on this machine, loopback
# only, bounded runs:
#
#   bench/events.sh [database] [seconds]
#
# Over the database (default bench_1m_ev: 1M listings seeded with their
# change histories) it starts an edge on 127.0.0.1:18095 with webhooks on
# (a key made for the run; loopback receivers allowed) and a refresh every
# 3 s, and measures:
#   1. changelogs and event feed pages, uncached (bench/misses --mix
#      events: distinct queries), from 1 and 4 connections;
#   2. 10,000 server-sent-event streams open: the cached /api/summary's
#      rate beside them and without them, the edge's RSS, and how long
#      after the publish of a state with a new event each stream gets it;
#   3. 10,000 webhook endpoints (100 of them hanging past the timeout,
#      100 answering 500) and one event each: how long until every
#      healthy endpoint has it, signatures verified by the receiver;
#   4. a second event, the delivering edge killed (kill -9) a second after
#      publishing it, started again: every healthy endpoint gets it (a new
#      receiver, which counts the second event alone), and how many
#      deliveries were repeated (made before the kill, and again after).
# PARTS (default "1 2 3 4") runs some of them; SSE_ROUNDS (default 1)
# repeats the second. Results go to bench/out/events.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
db=${1:-bench_1m_ev}
secs=${2:-15}
out=bench/out
mkdir -p "$out"
. bench/lib.sh
misses_prepare
GOEXPERIMENT=simd go build -o bin/events ./bench/events
bin/events reset --ch-database "$db" # an earlier run's endpoints: sealed with its key
port=18095
base=http://127.0.0.1:$port
export EDGE_WEBHOOK_KEY EDGE_CH_DATABASE=$db
EDGE_WEBHOOK_KEY=$(head -c 32 /dev/urandom | base64)
edge_env=(EDGE_WEBHOOK_ALLOW=127.0.0.1:19990 EDGE_WEBHOOK_ALLOW_HTTP=true EDGE_STREAM_PER_KEY=20000 EDGE_STREAM_TOTAL=20000
  EDGE_KEY_PER_MINUTE=100000000 EDGE_KEY_PER_DAY=100000000000
  EDGE_WEBHOOKS_PER_ACCOUNT=20000 "EDGE_REFRESH_SCHEDULE=@every 3s")
rss() { awk '/VmRSS/ {printf "%.0f MiB", $2 / 1024}' "/proc/$edge_pid/status"; }
receiver_pid=""
trap '[ -n "$edge_pid" ] && kill "$edge_pid" 2>/dev/null; [ -n "$receiver_pid" ] && kill "$receiver_pid" 2>/dev/null; true' EXIT

{
  echo "== events: $db, $(date -u +%FT%TZ), $pin_mode, $(git rev-parse --short HEAD)"
  misses_edge "$port" "${edge_env[@]}"
  echo "edge ready, RSS $(rss)"
  parts=" ${PARTS:-1 2 3 4} "
  if [[ $parts == *" 1 "* ]]; then
    for c in 1 4; do
      echo "-- 1. changelogs and feed pages, uncached, $c connections"
      bin/misses --base "$base" --mix events --conns "$c" --duration "${secs}s" --slowest 3
    done
  fi

  # The account (made by an earlier run, or now: a 409 is fine).
  curl -s -o /dev/null -X POST "$base/account" -H 'Content-Type: application/json' -d '{"email":"bench@example.com","password":"long enough password"}'
  # An earlier run's keys are revoked (an account holds a few): a new one.
  for id in $(curl -fs -u 'bench@example.com:long enough password' "$base/account/keys" | grep -o '"id":"[^"]*"' | cut -d'"' -f4); do
    curl -s -o /dev/null -X DELETE -u 'bench@example.com:long enough password' "$base/account/keys/$id"
  done
  key=$(curl -fs -X POST "$base/account/keys" -u 'bench@example.com:long enough password' | sed 's/.*"key":"\([^"]*\)".*/\1/')

  for round in $(seq 1 "${SSE_ROUNDS:-1}"); do
  [[ $parts == *" 2 "* ]] || break
  echo "-- 2. event streams (round $round)"
  echo "cached /api/summary without streams:"
  summary_hits "$port" "$secs"
  rm -f "$out/sse-ready" "$out/sse-go"
  bin/events sse --base "$base" --key "$key" --clients 10000 --ready "$out/sse-ready" --go "$out/sse-go" --wait 60s > "$out/sse.txt" 2>&1 &
  sse=$!
  for _ in $(seq 1 120); do [ -f "$out/sse-ready" ] && break; sleep 1; done
  head -1 "$out/sse.txt"
  echo "edge RSS with 10,000 streams open: $(rss); $(curl -fs "$base/metrics" | grep '^edge_event_streams_open')"
  echo "cached /api/summary with 10,000 streams open:"
  summary_hits "$port" "$secs"
  touch "$out/sse-go"
  echo "change written at $(date -u +%T.%N | cut -c1-12)"
  bin/events change --base "$base" --count 1
  wait "$sse" || true
  tail -n +2 "$out/sse.txt"
  echo "edge RSS after: $(rss)"
  sleep 5 # the streams close
  done

  if [[ $parts == *" 3 "* ]]; then
  echo "-- 3. webhooks: 10,000 endpoints, one event each"
  bin/events register --url http://127.0.0.1:19990 --count 10000 --secrets "$out/secrets.tsv"
  bin/events receive --listen 127.0.0.1:19990 --secrets "$out/secrets.tsv" --expect 1 --hang 100 --fail 100 --report 5s --for 5m > "$out/receive-1.txt" 2>&1 &
  receiver_pid=$!
  sleep 8 # the delivering edge reads the endpoints every 5 s
  echo "change written at $(date -u +%T.%N | cut -c1-12)"
  bin/events change --base "$base" --count 1
  wait "$receiver_pid" || true
  receiver_pid=""
  cat "$out/receive-1.txt"
  fi

  if [[ $parts == *" 4 "* ]]; then
  echo "-- 4. a second event, and the delivering edge killed a second after publishing it"
  bin/events receive --listen 127.0.0.1:19990 --secrets "$out/secrets.tsv" --expect 1 --hang 100 --fail 100 --report 10s --for 10m > "$out/receive-2.txt" 2>&1 &
  receiver_pid=$!
  gen=$(curl -fs "$base/readyz" | sed 's/.*"generation":\([0-9]*\).*/\1/')
  bin/events change --base "$base" --count 1
  for _ in $(seq 1 200); do
    g=$(curl -fs "$base/readyz" | sed 's/.*"generation":\([0-9]*\).*/\1/')
    [ "$g" != "$gen" ] && break
    sleep 0.05
  done
  sleep 1
  kill -9 "$edge_pid"
  wait "$edge_pid" 2>/dev/null || true
  echo "killed (kill -9) a second after the publish; starting again"
  misses_edge "$port" "${edge_env[@]}"
  wait "$receiver_pid" || true
  receiver_pid=""
  cat "$out/receive-2.txt"
  fi
  # The edge was started inside this group (a subshell: the trap does
  # not know it), and holds tee's pipe open while it runs.
  kill "$edge_pid"
  wait "$edge_pid" 2>/dev/null || true
} 2>&1 | tee -a "$out/events.txt"
