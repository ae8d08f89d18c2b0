#!/usr/bin/env bash
# Starts N edges at once over one ClickHouse database and reports what
# their starts cost ClickHouse: every query finished between the first
# start and the moment every edge has run its start-up jobs (views,
# editions, exports, ranks), from the server's counters (system.events:
# queries, CPU of the queries' threads; the edges' queries do not set
# log_queries, so the query log does not see them). Run it for 1 edge and
# for N to check that the costs add up (bench/README.md, What a fleet
# costs ClickHouse).
#
#   bench/fleetstart.sh 3                       # 3 edges over bench_100k
#   EDGE_CH_DATABASE=bench_1m bench/fleetstart.sh 2
#   FLEET=1 bench/fleetstart.sh 3               # 3 edges of a fleet: a ZooKeeper,
#                                               # an election, fleet addresses
#   STEADY=600 FLEET=1 bench/fleetstart.sh 3    # and what they cost in the 10
#                                               # minutes after their start
#   JOIN=2 FLEET=1 bench/fleetstart.sh 1        # and 2 new edges joining the
#                                               # started fleet at once: each
#                                               # one's start to its first
#                                               # answer (/readyz 200) and to
#                                               # its figures
#   DOWNLOADS=20 FLEET=1 bench/fleetstart.sh 1  # and 20 takes of the leader's
#                                               # state at once, as 20 joining
#                                               # edges take it (coming back
#                                               # a second after a 503): when
#                                               # each had it whole
#
# The edges read EDGE_* variables as edge serve does: EDGE_RANKS_SCHEDULE=off
# leaves out the ranks (a job of one edge a fleet, costed by bench/fleetcost).
# MEMORY_LIMIT is each edge's --memory-limit (3GiB; 12GiB for bench_5m).
#
# With FLEET=1 it starts a ZooKeeper (Debian's package) on 127.0.0.1:12181
# and gives every edge --zk and a fleet address (127.0.0.1:1818x): the
# elected edge loads from ClickHouse and the others from it. It also
# reports when each edge first published its figures.
#
# Loopback only: the edges listen on 127.0.0.1:1808x. The server must
# have no other traffic while it runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
n=${1:-1}
export EDGE_CH_ADDR=${EDGE_CH_ADDR:-127.0.0.1:19000}
export EDGE_CH_DATABASE=${EDGE_CH_DATABASE:-bench_100k}
ch() { clickhouse-client --port "${EDGE_CH_ADDR##*:}" -q "$1"; }

(cd "$root" && make -s build)
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

counters() {
  ch "SELECT sumIf(value, event = 'Query'), sumIf(value, event IN ('UserTimeMicroseconds', 'SystemTimeMicroseconds'))
      FROM system.events FORMAT TSV"
}
fleet=()
if [[ ${FLEET:-} == 1 ]]; then
  zk_start 12181 "$work/zk"
  pids+=("$ZK_PID")
  fleet=(--zk 127.0.0.1:12181 --zk-path "/edge/bench/$$" --fleet-token "$(head -c 48 /dev/urandom | base64)")
fi
read -r q0 cpu0 < <(counters)
start=$(date +%s)
start_edge() {
  local i=$1 extra=()
  mkdir -p "$work/$i"
  if [[ ${FLEET:-} == 1 ]]; then
    extra=("${fleet[@]}" --fleet-listen "127.0.0.1:$((18180 + i))" --fleet-dir "$work/f$i")
  fi
  "$root/bin/edge" serve --listen "127.0.0.1:$((18080 + i))" --exports-dir "$work/$i" \
    --memory-limit "${MEMORY_LIMIT:-3GiB}" --cache-mb 64 "${extra[@]}" >"$work/$i.log" 2>&1 &
  pids+=($!)
}
for i in $(seq 1 "$n"); do start_edge "$i"; done

# Done when every edge has run each start-up job once (a success or a
# skip); a job turned off (EDGE_RANKS_SCHEDULE=off, say) is not waited for.
done_all() {
  for i in $(seq 1 "$n"); do
    body=$(curl -s "127.0.0.1:$((18080 + i))/readyz" || true)
    for job in views editions exports ranks; do
      echo "$body" | python3 -c "
import json, sys
jobs = {j['name']: j for j in json.load(sys.stdin).get('jobs', [])}
j = jobs.get('$job')
sys.exit(0 if j is None or ((j['runs'] + j.get('skipped', 0)) > 0 and not j['running']) else 1)" 2>/dev/null || return 1
    done
  done
}
until done_all; do
  sleep 1
  if (( $(date +%s) - start > 1800 )); then echo "fleetstart: not done in 30 minutes" >&2; exit 1; fi
done
took=$(( $(date +%s) - start ))
read -r q1 cpu1 < <(counters)
echo "edges $n: every start-up job done in ${took}s; ClickHouse: $((q1 - q0)) queries, $(( (cpu1 - cpu0) / 1000 )) CPU ms"
for i in $(seq 1 "$n"); do
  # When each edge published its figures, and where from.
  grep -m1 'msg="views published"' "$work/$i.log" | sed -E 's/.*time=([^ ]+).*kind=([a-z]+).*/\1 \2/' |
    while read -r at kind; do
      echo "edge $i: figures published at +$(( $(date -d "$at" +%s) - start ))s (kind=$kind)"
    done
  grep -m1 'fleet state written' "$work/$i.log" | sed -E 's/.*(generation=.*)/edge '"$i"': fleet state written: \1/' || true
  grep -m1 'fleet state read' "$work/$i.log" | sed -E 's/.*time=([^ ]+).*(took=.*)/edge '"$i"': fleet state read by \1, \2/' || true
  grep -m1 'msg="replica published"' "$work/$i.log" | sed -E 's/^time=([^ ]+).*/\1/' | while read -r at; do
    echo "edge $i: listings served from +$(( $(date -d "$at" +%s) - start ))s"
  done
done
if [[ -n ${STEADY:-} ]]; then
  # What the edges cost once started: the counters over STEADY seconds.
  sleep "$STEADY"
  read -r q2 cpu2 < <(counters)
  echo "edges $n: the next ${STEADY}s: ClickHouse: $((q2 - q1)) queries, $(( (cpu2 - cpu1) / 1000 )) CPU ms"
fi
if [[ -n ${JOIN:-}${DOWNLOADS:-} ]]; then
  # Joining edges take the leader's state: once it is written.
  until grep -q 'fleet state written' "$work/1.log"; do sleep 0.5; done
fi
if [[ -n ${JOIN:-} ]]; then
  # New edges joining the started fleet at once: from each one's start to
  # its first answer (/readyz 200: its listings, from the leader's state)
  # and to its figures.
  [[ ${FLEET:-} == 1 ]] || { echo "fleetstart: JOIN needs FLEET=1" >&2; exit 1; }
  read -r q3 cpu3 < <(counters)
  t0=$(date +%s.%N)
  declare -A first figures
  for j in $(seq $((n + 1)) $((n + JOIN))); do start_edge "$j"; done
  while :; do
    left=0
    for j in $(seq $((n + 1)) $((n + JOIN))); do
      [[ -n ${figures[$j]:-} ]] && continue
      left=1
      body=$(curl -fs "127.0.0.1:$((18080 + j))/readyz" 2>/dev/null) || continue
      now=$(date +%s.%N)
      [[ -z ${first[$j]:-} ]] && first[$j]=$(echo "$now - $t0" | bc)
      if echo "$body" | grep -q '"figures":true'; then figures[$j]=$(echo "$now - $t0" | bc); fi
    done
    (( left )) || break
    if (( $(date +%s) - ${t0%.*} > 1800 )); then echo "fleetstart: the joining edges had no figures in 30 minutes" >&2; exit 1; fi
    sleep 0.2
  done
  read -r q4 cpu4 < <(counters)
  for j in $(seq $((n + 1)) $((n + JOIN))); do
    printf 'edge %d joined: first answer at +%.1fs, figures at +%.1fs; %s\n' "$j" "${first[$j]}" "${figures[$j]}" \
      "$(grep -m1 'fleet state read' "$work/$j.log" | grep -o 'took=[^ ]*' || echo 'no fleet state read')"
  done
  echo "edges joining: ClickHouse meanwhile: $((q4 - q3)) queries, $(( (cpu4 - cpu3) / 1000 )) CPU ms"
fi
if [[ -n ${DOWNLOADS:-} ]]; then
  # DOWNLOADS takes of the leader's state at once, each coming back a
  # second after a 503 (the leader's bound on its sends), as that many
  # joining edges take it before they read it: when each had it whole.
  # The fleet is on loopback without a token, so that curl may ask (with
  # one, only an edge's certificate is answered: docs/operations.md).
  [[ ${FLEET:-} == 1 ]] || { echo "fleetstart: DOWNLOADS needs FLEET=1" >&2; exit 1; }
  take() {
    local t0=$1 k=$2 code tries=0
    while :; do
      tries=$((tries + 1))
      code=$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:18181/fleet/v1/state")
      [[ $code == 200 ]] && break
      [[ $code == 503 ]] || { echo "take $k: $code" >&2; return 1; }
      sleep 1
    done
    printf 'take %d: whole at +%.1fs after %d asks\n' "$k" "$(echo "$(date +%s.%N) - $t0" | bc)" "$tries"
  }
  t0=$(date +%s.%N)
  takes=()
  for k in $(seq 1 "$DOWNLOADS"); do
    take "$t0" "$k" >"$work/take$k" &
    takes+=($!)
  done
  for p in "${takes[@]}"; do wait "$p" || true; done
  cat "$work"/take* | sort -t+ -k2 -n
fi
