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
  mkdir -p "$work/zk"
  printf 'tickTime=500\ndataDir=%s\nclientPort=12181\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n' "$work/zk" >"$work/zk/zoo.cfg"
  java -Xmx256m -XX:+UseSerialGC -cp '/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/*' \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$work/zk/zoo.cfg" >"$work/zk.log" 2>&1 &
  pids+=($!)
  until (exec 3<>/dev/tcp/127.0.0.1/12181) 2>/dev/null; do sleep 0.2; done
  fleet=(--zk 127.0.0.1:12181 --zk-path "/edge/bench/$$")
fi
read -r q0 cpu0 < <(counters)
start=$(date +%s)
for i in $(seq 1 "$n"); do
  mkdir -p "$work/$i"
  extra=()
  if [[ ${FLEET:-} == 1 ]]; then
    extra=("${fleet[@]}" --fleet-listen "127.0.0.1:$((18180 + i))" --fleet-dir "$work/f$i" --fleet-token bench-fleet-token)
  fi
  "$root/bin/edge" serve --listen "127.0.0.1:$((18080 + i))" --exports-dir "$work/$i" \
    --memory-limit "${MEMORY_LIMIT:-3GiB}" --cache-mb 64 "${extra[@]}" >"$work/$i.log" 2>&1 &
  pids+=($!)
done

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
