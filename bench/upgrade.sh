#!/usr/bin/env bash
# A fleet of two releases (issue 54, upgrades): an edge of an earlier
# release (OLD, a git revision; default 6b3d6a2, the release before this
# one, which shares its state format: docs/operations.md, Upgrades) and
# one of this tree, over one database, both ways round:
#
#   bench/upgrade.sh [OLD]
#
# 1. The schema is brought up to this release with this release's
#    `edge migrate` (an expand migration: the earlier release serves
#    beside it, docs/operations.md, Upgrades).
# 2. The earlier release leads and this one follows; then this release
#    leads and the earlier one follows. In each, the follower must serve
#    the leader's state (its log says where it took it from: kind=fleet,
#    or the reason it loaded from ClickHouse), answer what the leader
#    answers, and take the leader's next state after a crawl arrives.
#
# Loopback only: ClickHouse at EDGE_CH_ADDR (deploy/clickhouse.sh), a
# ZooKeeper on 127.0.0.1:12182 that it starts, the edges on
# 127.0.0.1:1809x. Results go to bench/out/upgrade.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
cd "$root"
old=${1:-6b3d6a2}
export EDGE_CH_ADDR=${EDGE_CH_ADDR:-127.0.0.1:19000}
export EDGE_CH_DATABASE=${EDGE_CH_DATABASE:-bench_upgrade}
out=bench/out/upgrade.txt
mkdir -p bench/out
ch() { clickhouse-client --port "${EDGE_CH_ADDR##*:}" -d "$EDGE_CH_DATABASE" -q "$1"; }

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  git worktree remove --force "$work/src" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

make -s build
git worktree add --detach "$work/src" "$old" >/dev/null 2>&1
(cd "$work/src" && GOEXPERIMENT=simd go build -trimpath -o "$work/edge-old" ./cmd/edge)
new=$root/bin/edge
echo "== $(date -u +%FT%TZ) upgrade: $(git rev-parse --short "$old") and $(git rev-parse --short HEAD)" | tee -a "$out"
# The earlier release's schema and data first, then this release's expand
# migrations over them, as an operator upgrades.
"$work/edge-old" migrate >/dev/null
"$work/edge-old" seed --if-empty --listings 20000 --days 60 >/dev/null
"$new" migrate | tee -a "$out"

zk_start 12182 "$work/zk"
pids+=("$ZK_PID")

token=$(head -c 48 /dev/urandom | base64) # 64 characters, far above the floor of estimated strength
# start <binary> <port> <name> <zk path>: an edge of the fleet.
start() {
  "$1" serve --listen "127.0.0.1:$2" --zk 127.0.0.1:12182 --zk-path "$4" --fleet-listen "127.0.0.1:$(($2 + 100))" \
    --fleet-token "$token" --fleet-dir "$work/f$2" --exports-dir "$work/x$2" --memory-limit 2GiB --cache-mb 64 \
    --refresh-schedule "@every 5s" --full-schedule "0 0 1 1 *" --ranks-schedule off --exports-schedule off \
    --editions-schedule off --no-limits >"$work/$3.log" 2>&1 &
  pids+=($!)
}
generation() { curl -s "127.0.0.1:$1/metrics" | awk '/^edge_views_generation / { print int($2) }'; }
wait_for() { # wait_for <what> <seconds> <command...>
  local what=$1 secs=$2 t=$SECONDS
  shift 2
  until "$@"; do
    if ((SECONDS - t > secs)); then
      echo "FAIL: not within ${secs}s: $what" | tee -a "$out"
      return 1
    fi
    sleep 0.5
  done
}
# etag is the ETag of an edge's /api/summary: the same on two edges that
# serve the same state (their generations count their own publishes).
etag() { curl -s -o /dev/null -D - "127.0.0.1:$1/api/summary" | awk 'tolower($1) == "etag:" { print $2 }' | tr -d '\r'; }
same_state() { local a b; a=$(etag "$1"); b=$(etag "$2"); [[ -n $a && $a == "$b" ]]; }
newer_than() { local g; g=$(generation "$1"); [[ -n $g && $g -gt $2 ]]; }

# round <leader binary> <leader name> <follower binary> <follower name> <port base>
failed=0
round() {
  local lp=$5 fp=$(($5 + 1)) path="/edge/bench/upgrade-$$-$5"
  start "$1" "$lp" "$2" "$path"
  wait_for "$2 leads and writes its state" 120 grep -q 'fleet state written' "$work/$2.log" || return 1
  start "$3" "$fp" "$4" "$path"
  wait_for "$4 serves $2's state" 120 same_state "$lp" "$fp" || return 1
  local from
  from=$(grep -m1 -oE 'msg="views published" kind=[a-z]+' "$work/$4.log" | sed 's/.*kind=//')
  echo "$2 leads, $4 follows: the follower serves the leader's state (ETag $(etag "$fp"), kind=$from)" | tee -a "$out"
  grep -E 'fleet|whole|delta' "$work/$4.log" | grep -vE 'level=DEBUG' | head -5 | sed 's/^/  follower: /' | tee -a "$out"
  local p sl so same=0 differ=0
  for p in /api/summary /api/v1/charts/chrome /api/v1/listings?store=edge /api/v1/stores/googleplay/stats /api/v1/changes /api/extensions?sort=users /stores/chrome; do
    sl=$(curl -s "127.0.0.1:$lp$p" | sha256sum)
    so=$(curl -s "127.0.0.1:$fp$p" | sha256sum)
    if [[ $sl == "$so" ]]; then same=$((same + 1)); else differ=$((differ + 1)); echo "  $p: the two releases answer different bytes" | tee -a "$out"; fi
    for port in "$lp" "$fp"; do
      local code
      code=$(curl -s -o /dev/null -w '%{http_code}' "127.0.0.1:$port$p")
      [[ $code == 200 ]] || { echo "  FAIL $p on :$port answers $code" | tee -a "$out"; failed=1; }
    done
  done
  echo "  $same of $((same + differ)) answers the same bytes on both" | tee -a "$out"
  # A crawl arrives: the leader refreshes and the follower takes it.
  local g
  g=$(generation "$lp")
  ch "INSERT INTO snapshots (store, id, crawled_at, usage, weekly_downloads, rating, rating_count, stars)
      SELECT store, id, now(), argMax(usage, crawled_at) + 1, argMax(weekly_downloads, crawled_at),
             argMax(rating, crawled_at), argMax(rating_count, crawled_at), argMax(stars, crawled_at)
      FROM snapshots GROUP BY store, id HAVING cityHash64(id, $5) % 288 = 0"
  wait_for "$2 refreshes after a crawl" 60 newer_than "$lp" "$g" || return 1
  wait_for "$4 takes $2's next state" 60 same_state "$lp" "$fp" || return 1
  local kinds
  kinds=$(curl -s "127.0.0.1:$fp/metrics" | awk '/^edge_fleet_state_bytes_total\{direction="received"/ { printf "%s %s; ", $1, $2 }')
  echo "  after a crawl: both serve ETag $(etag "$fp"); the follower took: ${kinds:-(an earlier release: no such metric)}" | tee -a "$out"
  if grep -q 'kind=full' "$work/$4.log"; then
    echo "  FAIL: the follower loaded from ClickHouse: $(grep -m1 -E 'level=(WARN|ERROR).*(fleet|state)' "$work/$4.log" || echo 'no reason logged')" | tee -a "$out"
    failed=1
  fi
  local k=${#pids[@]}
  kill "${pids[k - 1]}" "${pids[k - 2]}" 2>/dev/null || true
  wait "${pids[k - 1]}" "${pids[k - 2]}" 2>/dev/null || true
  pids=("${pids[@]:0:k-2}")
}
round "$work/edge-old" old-leader "$new" new-follower 18091 || failed=1
round "$new" new-leader "$work/edge-old" old-follower 18093 || failed=1
if ((failed)); then
  echo "upgrade: FAILED (logs in $work, kept)" | tee -a "$out"
  trap - EXIT
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  exit 1
fi
echo "upgrade: both ways round, the follower served the leader's state and its next" | tee -a "$out"
