#!/usr/bin/env bash
# States crossing real links (issue 54): a leading edge and N following
# edges, each follower in a network namespace of its own behind a link
# of RATE (1gbit), and crawls arriving as a fleet sees them.
#
#   sudo bench/fleetnet.sh 10                   # 10 followers over bench_fleetnet (100,000 listings)
#   ROUNDS=2 LISTINGS=1000000 DAYS=30 EDGE_CH_DATABASE=bench_fleetnet_1m MEMORY_LIMIT=6GiB bench/fleetnet.sh 2
#
# It seeds EDGE_CH_DATABASE (default bench_fleetnet, LISTINGS 100000, DAYS
# 90) when empty, starts a ZooKeeper on 127.0.0.1:12181 and the leader
# in this namespace (its fleet address on the bench's bridge, 10.77.0.1),
# then the followers (10.77.0.11, .12, ...), each one's veth shaped both
# ways by tc (tbf at RATE). The followers reach ClickHouse and ZooKeeper,
# which listen on loopback, through bench/fleetnet's forwarder on the
# bridge. Once every follower serves the leader's state, each of ROUNDS
# (default 3) rounds writes a crawl of 1 listing in 288 (a five-minute
# refresh of a day's crawl: a new reading of each, its users one more)
# and waits for the leader's refresh (EDGE_REFRESH_SCHEDULE, every 20 s
# here) and for every follower to publish its figures of that state. It
# reports, per round, from the leader's publish ("views published" in its
# log) to each follower's of the same state (matched by its tag; negative
# when the follower published first: the leader hands a state out before
# it builds its own figures), and the bytes each follower took (its
# edge_fleet_state_bytes_total) against the whole state's size.
#
# Rounds come at a refresh's cadence, not back to back: before each
# round's crawl the bench waits, as a five-minute refresh would, until
# the leader has written the state before whole (EDGE_FLEET_WHOLE_AFTER
# after its delta), each follower has made its spare for the next
# delta (or said it has no room for one) and every edge has precompressed
# the answers of the state it serves, for SETTLE seconds at most
# (default 300, the five minutes the crawl's 1 in 288 stands for). Back
# to back, the state before's whole write (a minute of both cores at 5M
# listings) lands on the next round's, which a fleet refreshing every
# five minutes never sees.
#
# RELOAD=1 adds to each round, once it settled again, a full reload of
# the leader (kill -HUP, as its hourly --full-schedule runs one) with no
# new crawl: it reports the same figures for that state, and the
# changed listings and bytes of the leader's delta ("fleet delta
# written"). The first round's crawl is read now, so when the seeded
# data ends on an earlier day, that round's reload is the data's new
# day's first (its charts' window and climb time move a day on).
#
# LEADER_MEMORY_LIMIT gives the leader a memory limit of its own (the
# followers keep MEMORY_LIMIT): a leader's full reload builds a second
# state beside the one it serves, and waits when that would not fit
# (docs/operations.md, *Memory*), which a follower never needs.
#
# CRAWL_AT (a ClickHouse expression, default now()) is when the rounds'
# crawls were read: "now() + INTERVAL 1 DAY" makes round 1's crawl the
# data's new day when the data already reached today.
#
# SEED_END (an RFC 3339 instant) ends the seeded data there instead of
# now: a day before now makes round 1's crawl the data's new day, so that
# its refresh and reload move the charts' window and climb time a day on.
#
# PROFILE=1 takes a CPU profile of the leader and of follower 1 through
# each round (--debug-listen in their namespaces; 60 s from the crawl),
# and GCTRACE=1 runs the edges with GODEBUG=gctrace=1: both land beside
# the logs.
#
# Root, ip and tc (iproute2) are needed. Traffic goes only between the
# namespaces and bridge it makes, which it removes at the end, with its
# processes. Results go to bench/out/fleetnet.txt, the edges' logs to
# bench/out/fleetnet-logs/ (0.log the leader's).
set -Eeuo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
. "$root/bench/lib.sh"
cd "$root"
n=${1:-10}
rate=${RATE:-1gbit}
rounds=${ROUNDS:-3}
export EDGE_CH_ADDR=${EDGE_CH_ADDR:-127.0.0.1:19000}
export EDGE_CH_DATABASE=${EDGE_CH_DATABASE:-bench_fleetnet}
listings=${LISTINGS:-100000}
days=${DAYS:-90}
br=edgefl0
net=10.77.0
out=bench/out/fleetnet.txt
mkdir -p bench/out
ch() { clickhouse-client --port "${EDGE_CH_ADDR##*:}" -d "$EDGE_CH_DATABASE" -q "$1"; }

make -s build
GOEXPERIMENT=simd go build -o bin/fleetnet ./bench/fleetnet
bin/edge seed --if-empty --listings "$listings" --days "$days" ${SEED_END:+--end "$SEED_END"} >/dev/null

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for i in $(seq 1 "$n"); do ip netns del "efl$i" 2>/dev/null || true; done
  ip link del "$br" 2>/dev/null || true
  rm -rf bench/out/fleetnet-logs && mkdir -p bench/out/fleetnet-logs && cp "$work"/*.log "$work"/*.pprof bench/out/fleetnet-logs/ 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'echo "fleetnet: failed at line $LINENO: $BASH_COMMAND" >&2' ERR

# The bridge, and a namespace for each follower behind its shaped veth
# (what an interrupted run left removed first).
for l in $(ip -o link | grep -oE 'vfl[0-9]+' | sort -u); do ip link del "$l" 2>/dev/null || true; done
for ns in $(ip netns list | grep -oE '^efl[0-9]+'); do ip netns del "$ns" 2>/dev/null || true; done
ip link del "$br" 2>/dev/null || true
ip link add "$br" type bridge
ip addr add "$net.1/24" dev "$br"
ip link set "$br" up
for i in $(seq 1 "$n"); do
  ip netns add "efl$i"
  ip link add "vfl$i" type veth peer name eth0 netns "efl$i"
  ip link set "vfl$i" master "$br" up
  ip netns exec "efl$i" ip addr add "$net.$((10 + i))/24" dev eth0
  ip netns exec "efl$i" ip link set eth0 up
  ip netns exec "efl$i" ip link set lo up
  tc qdisc add dev "vfl$i" root tbf rate "$rate" burst 256kb latency 50ms
  ip netns exec "efl$i" tc qdisc add dev eth0 root tbf rate "$rate" burst 256kb latency 50ms
done

zk_start 12181 "$work/zk"
pids+=("$ZK_PID")
bin/fleetnet "$net.1:${EDGE_CH_ADDR##*:}=$EDGE_CH_ADDR" "$net.1:12181=127.0.0.1:12181" >"$work/fleetnet.log" 2>&1 &
pids+=($!)

token=$(head -c 48 /dev/urandom | base64) # 64 characters, far above the floor of estimated strength
common=(--zk-path "/edge/bench/fleetnet-$$" --fleet-token "$token" --memory-limit "${MEMORY_LIMIT:-2GiB}" --cache-mb 64
  --refresh-schedule "@every 20s" --full-schedule "0 0 1 1 *" --ranks-schedule off --exports-schedule off --editions-schedule off --no-limits)
run_env=()
[[ -n ${GCTRACE:-} ]] && run_env=(env GODEBUG=gctrace=1)
[[ -n ${PROFILE:-} ]] && common+=(--debug-listen 127.0.0.1:16060)
"${run_env[@]}" bin/edge serve --listen 127.0.0.1:18090 --zk 127.0.0.1:12181 --fleet-listen "$net.1:18190" \
  --fleet-dir "$work/f0" "${common[@]}" ${LEADER_MEMORY_LIMIT:+--memory-limit "$LEADER_MEMORY_LIMIT"} >"$work/0.log" 2>&1 &
pids+=($!)
echo "waiting for the leader's first state"
until grep -q 'fleet state written' "$work/0.log"; do sleep 0.5; done
for i in $(seq 1 "$n"); do
  ip netns exec "efl$i" "${run_env[@]}" bin/edge serve --listen 127.0.0.1:18090 --ch-addr "$net.1:${EDGE_CH_ADDR##*:}" --zk "$net.1:12181" \
    --fleet-listen "$net.$((10 + i)):18190" --fleet-dir "$work/f$i" "${common[@]}" >"$work/$i.log" 2>&1 &
  pids+=($!)
done

metric() { # metric <follower index, 0 the leader> <sample with labels>
  local cmd=(curl -s 127.0.0.1:18090/metrics)
  (($1 > 0)) && cmd=(ip netns exec "efl$1" "${cmd[@]}")
  "${cmd[@]}" | awk -v s="$2" 'index($0, s" ") == 1 { print $2; found = 1 } END { if (!found) print 0 }'
}
generation() { metric "$1" edge_views_generation | cut -d. -f1; }
# etag is the ETag of an edge's /api/summary: the same on the leader and
# a follower that serve the same state (each edge's generation counts
# its own publishes).
etag() {
  local cmd=(curl -s -o /dev/null -D - 127.0.0.1:18090/api/summary)
  (($1 > 0)) && cmd=(ip netns exec "efl$1" "${cmd[@]}")
  "${cmd[@]}" | awk 'tolower($1) == "etag:" { print $2 }' | tr -d '\r'
}
# leader_publish <generation>: the time of the leader's "views published"
# line of that generation, and the tag of the state (its "fleet delta
# written" line, or its "fleet state written" line's generation's).
leader_publish() {
  { grep 'msg="views published"' "$work/0.log" | grep " generation=$1 " || true; } | head -1 | sed -E 's/^time=([^ ]+).*/\1/'
}
leader_tag() {
  { grep 'msg="fleet delta written"' "$work/0.log" | grep " generation=$1 " || true; } | head -1 | sed -E 's/.* tag=([^ ]+).*/\1/'
}
# published_tag <index> <tag>: the time a follower published the state of
# tag (its "views published" line names it): before or after the
# leader's, which builds its figures beside its followers.
published_tag() {
  { grep 'msg="views published"' "$work/$1.log" | grep -F " tag=$2" || true; } | head -1 | sed -E 's/^time=([^ ]+).*/\1/'
}
echo "waiting for $n followers to serve the leader's state"
until [[ -n $(etag 0) ]]; do sleep 0.5; done
for i in $(seq 1 "$n"); do
  until [[ $(etag "$i") == "$(etag 0)" ]]; do sleep 0.5; done
done
whole=$(stat -c %s "$work"/f0/*.snap 2>/dev/null | sort -n | tail -1 || echo 0)
{
  echo "== $(date -u +%FT%TZ) fleetnet: $n followers behind $rate links, $EDGE_CH_DATABASE ($(ch 'SELECT count() FROM listings_latest FINAL') listings)"
  echo "whole state (the leader's snapshot file): $whole bytes"
  for i in $(seq 1 "$n"); do
    echo "follower $i first state: $(metric "$i" 'edge_fleet_state_bytes_total{direction="received",kind="whole"}' | awk '{ printf "%.0f", $1 }') bytes whole"
  done
} | tee -a "$out"

# settle waits, for SETTLE seconds at most, until the leader has written
# its newest state whole, every follower has made its spare for the
# next delta (or has no room for one) since the state it read last, and
# every edge has run a precompression round for each state it published.
settle() {
  local deadline=$((SECONDS + ${SETTLE:-300})) g i ok
  g=$(generation 0)
  while ((SECONDS < deadline)); do
    ok=1
    grep 'msg="fleet state written"' "$work/0.log" | grep -q " generation=$g " || ok=0
    for i in $(seq 1 "$n"); do
      (($(grep -c 'msg="fleet state read"' "$work/$i.log" || true) <= $(grep -cE 'msg="(spare made|no spare)' "$work/$i.log" || true))) || ok=0
    done
    for i in $(seq 0 "$n"); do # each edge's answers of its newest state precompressed (a round a publish)
      (($(metric "$i" edge_precompress_round_seconds_count | cut -d. -f1) >= $(grep -c 'msg="views published"' "$work/$i.log" || true))) || ok=0
    done
    ((ok)) && { echo "settled in $((SECONDS - deadline + ${SETTLE:-300})) s"; return; }
    sleep 1
  done
  echo "not settled after ${SETTLE:-300} s: the round starts anyway"
}

# faults <pid>: the minor page faults of a process so far (field 10 of
# its stat): on this VM a page the system gives a process for the first
# time costs about 16 µs (bench/README, third round).
faults() { awk '{ sub(/.*\) /, ""); print $8 }' "/proc/$1/stat" 2>/dev/null || echo 0; }

# report <what>: once the leader published a generation past g0 and every
# follower serves it, the times from the leader's publish to each
# follower's, the bytes each took since before[], the page faults since
# flt0[], and what the leader's delta held; it prints them after what.
report() {
  until (( $(generation 0) > g0 )); do sleep 0.2; done
  local g tag lead stag t0 i at d w dline sorted
  g=$(generation 0)
  tag=$(etag 0)
  for i in $(seq 1 "$n"); do
    until [[ $(etag "$i") == "$tag" ]]; do sleep 0.2; done
  done
  sleep 1
  local flts=() times=() bytes=()
  for i in $(seq 0 "$n"); do flts+=("$(( $(faults "${pids[$((2 + i))]}") - flt0[$i] ))"); done
  lead=$(leader_publish "$g")
  # The leader writes the state's delta after it publishes (a day's
  # first reload's takes a while at 5M): wait for it, a while at most.
  for _ in $(seq 1 600); do
    stag=$(leader_tag "$g")
    [[ -n $stag ]] && break
    grep 'msg="fleet state written"' "$work/0.log" | grep -q " generation=$g " && break
    sleep 0.5
  done
  # A state that changed nothing has the ETag of the one before: wait
  # (a while at most) for each follower's publish of it too.
  for i in $(seq 1 "$n"); do
    for _ in $(seq 1 600); do
      [[ -z $stag || -n $(published_tag "$i" "$stag") ]] && break
      sleep 0.5
    done
  done
  t0=$(date -d "$lead" +%s.%N)
  for i in $(seq 1 "$n"); do
    at=$(published_tag "$i" "$stag")
    if [[ -z $at ]]; then times+=("?"); else times+=("$(awk -v a="$(date -d "$at" +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')"); fi
    d=$(metric "$i" 'edge_fleet_state_bytes_total{direction="received",kind="delta"}')
    w=$(metric "$i" 'edge_fleet_state_bytes_total{direction="received",kind="whole"}')
    bytes+=("$(awk -v d="$d" -v d0="${before[$i]}" -v w="$w" -v w0="${before[w$i]}" 'BEGIN { printf "%.0f+%.0f", d - d0, w - w0 }')")
  done
  dline=$(grep 'msg="fleet delta written"' "$work/0.log" | grep " generation=$g " | head -1 | grep -oE '(changed|removed|kib|took)=[^ ]+' | tr '\n' ' ')
  {
    echo "$1; the leader published generation $g"
    echo "  the leader's delta: ${dline:-none written}"
    echo "  leader's publish to each follower's publish (s): ${times[*]}"
    echo "  bytes each follower took (delta+whole): ${bytes[*]}"
    echo "  minor page faults in the round (leader, then each follower): ${flts[*]}"
    sorted=$(printf '%s\n' "${times[@]}" | grep -v '?' | sort -g)
    echo "  slowest follower: $(tail -1 <<<"$sorted") s; median: $(sed -n "$(( ($(wc -l <<<"$sorted") + 1) / 2 ))p" <<<"$sorted") s"
  } | tee -a "$out"
}

profiles=()
for r in $(seq 1 "$rounds"); do
  settle
  g0=$(generation 0)
  declare -A before=()
  for i in $(seq 1 "$n"); do
    before[$i]=$(metric "$i" 'edge_fleet_state_bytes_total{direction="received",kind="delta"}')
    before[w$i]=$(metric "$i" 'edge_fleet_state_bytes_total{direction="received",kind="whole"}')
  done
  # A crawl of 1 listing in 288, read now: their newest reading again,
  # with one more user.
  declare -A flt0=()
  for i in $(seq 0 "$n"); do flt0[$i]=$(faults "${pids[$((2 + i))]}"); done
  rows0=$(ch "SELECT count() FROM snapshots")
  ch "INSERT INTO snapshots (store, id, crawled_at, usage, weekly_downloads, rating, rating_count, stars)
      SELECT store, id, ${CRAWL_AT:-now()}, argMax(usage, crawled_at) + 1, argMax(weekly_downloads, crawled_at),
             argMax(rating, crawled_at), argMax(rating_count, crawled_at), argMax(stars, crawled_at)
      FROM snapshots GROUP BY store, id HAVING cityHash64(id, $r, $$) % 288 = 0"
  changed=$(( $(ch "SELECT count() FROM snapshots") - rows0 ))
  if [[ -n ${PROFILE:-} ]]; then
    curl -s -o "$work/cpu-0-r$r.pprof" "127.0.0.1:16060/debug/pprof/profile?seconds=60" &
    profiles+=($!)
    ip netns exec efl1 curl -s -o "$work/cpu-1-r$r.pprof" "127.0.0.1:16060/debug/pprof/profile?seconds=60" &
    profiles+=($!)
  fi
  report "round $r: $changed listings crawled"
  if [[ -n ${RELOAD:-} ]]; then
    settle
    g0=$(generation 0)
    for i in $(seq 0 "$n"); do flt0[$i]=$(faults "${pids[$((2 + i))]}"); done
    for i in $(seq 1 "$n"); do
      before[$i]=$(metric "$i" 'edge_fleet_state_bytes_total{direction="received",kind="delta"}')
      before[w$i]=$(metric "$i" 'edge_fleet_state_bytes_total{direction="received",kind="whole"}')
    done
    kill -HUP "${pids[2]}"
    report "round $r, the leader's full reload (kill -HUP), nothing crawled"
  fi
done
echo "leader's RSS: $(ps -o rss= -p "${pids[2]}" 2>/dev/null || echo ?) KiB; a follower's: $(ps -o rss= -p "${pids[3]}" 2>/dev/null || echo ?) KiB" | tee -a "$out"
for p in "${profiles[@]}"; do wait "$p" || true; done
