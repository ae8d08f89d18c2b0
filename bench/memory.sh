#!/usr/bin/env bash
# The edge's memory as an operator provisions it (issue 20): RSS, steady
# and at its peak through a full reload under load, with the times from
# start to first answer, to published figures and to every edition.
#
#   bench/memory.sh DB [LISTINGS]     e.g. bench/memory.sh bench_1m 1000000
#   EDGE_ARGS="--editions-schedule off" bench/memory.sh …   without editions
#
# Starts `edge serve` over database DB (seeded by bench/run.sh), samples
# the process's RSS (VmRSS) every second into bench/out/memory-DB.csv,
# waits for the figures and the editions, takes the steady RSS (median of
# a minute of samples under no load), then forces a full reload (SIGHUP)
# while wrk sends cached and uncached answers, and
# reports the peak (VmHWM: the largest RSS since start, the first load
# included). Ranks are off: they live in ClickHouse and cost the edge one
# store's sizes (8 bytes a listing) while they run. Traffic goes to
# loopback only, for bounded durations.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
db=${1:?usage: bench/memory.sh DB [LISTINGS]}
port=${PORT:-18093}
cache_mb=${CACHE_MB:-256}
out=bench/out
mkdir -p "$out"
csv=$out/memory-$db.csv
log=$out/memory-$db.log
if [ -z "${EDGE_CH_ADDR:-}" ]; then deploy/clickhouse.sh start; export EDGE_CH_ADDR=127.0.0.1:19000; fi
command -v wrk >/dev/null 2>&1 || { sudo=""; [ "$(id -u)" != 0 ] && sudo=sudo; $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
GOEXPERIMENT=simd go build -o bin/edge ./cmd/edge
bin/edge migrate --ch-database "$db" >/dev/null

start=$(date +%s.%N)
EDGE_FAIR_USE_RATE=0 EDGE_ANON_PER_MINUTE=1000000000 EDGE_ANON_PER_DAY=1000000000000 EDGE_SEARCH_RATE=0 \
  bin/edge serve --ch-database "$db" --listen "127.0.0.1:$port" --log-level info --log-format json \
  --ranks-schedule off --full-schedule "@every 24h" --cache-mb "$cache_mb" ${EDGE_ARGS:-} >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; kill $sampler 2>/dev/null || true' EXIT
(
  echo "seconds,rss_kib"
  while kill -0 $pid 2>/dev/null; do
    r=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || true)
    [ -n "$r" ] && echo "$(echo "$(date +%s.%N) - $start" | bc),$r"
    sleep 1
  done
) >"$csv" &
sampler=$!
elapsed() { echo "$(date +%s.%N) - $start" | bc; }

first=""
for _ in $(seq 1 3600); do
  # the first answer: the bare replica is published (listing documents, /readyz 200)
  if [ -z "$first" ] && curl -fs "127.0.0.1:$port/readyz" >/dev/null 2>&1; then first=$(elapsed); fi
  if curl -fs "127.0.0.1:$port/readyz" | grep -q '"figures":true'; then break; fi
  sleep 0.5
done
figures=$(elapsed)
for _ in $(seq 1 7200); do
  case " ${EDGE_ARGS:-} " in *" --editions-schedule off "*) break ;; esac
  # the job publishes after each edition: wait until its first run is done
  if grep -q '"msg":"job done","job":"editions"' "$log"; then break; fi
  sleep 1
done
editions=$(elapsed)
n=$(curl -fs "127.0.0.1:$port/readyz" | sed -n 's/.*"editions":\([0-9]*\).*/\1/p')
listings=${2:-$(curl -fs "127.0.0.1:$port/readyz" | grep -o '"listings":{[^}]*}' | grep -o '[0-9][0-9]*' | paste -sd+ | bc)}

# Steady: a minute without load after everything is published.
sleep 60
steady=$(tail -n 60 "$csv" | cut -d, -f2 | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')

# Through a full reload under load: SIGHUP starts one; load until it has
# published.
fulls() { grep -c '"kind":"full"' "$log" || true; }
before=$(fulls)
cat >/tmp/edge-memory-urls.lua <<'EOF'
local paths = {"/api/summary", "/api/v1/stores/chrome/stats", "/api/v1/listings?store=chrome&limit=50", "/api/extensions?page=1"}
local n = 0
-- about 1,000 requests a second a connection: an origin's load, not a
-- saturating one (the reload shares the two cores with it)
delay = function()
  return 1
end
request = function()
  n = n + 1
  if n % 4 == 0 then
    return wrk.format("GET", "/api/v1/listings?store=googleplay&limit=20&minSize=" .. math.random(1, 100000))
  end
  return wrk.format("GET", paths[(n % #paths) + 1])
end
-- Non-2xx answers by status, path and detail (every error is problem+json
-- naming its path in "instance"), printed at the end.
failed = {}
response = function(status, headers, body)
  if status >= 200 and status < 300 or status == 304 then return end
  local what = status .. " " .. (body:match('"instance":"([^"?]*)') or "?") .. " " .. (body:match('"detail":"([^"]*)') or body:sub(1, 80))
  failed[what] = (failed[what] or 0) + 1
end
local threads = {}
setup = function(t) table.insert(threads, t) end
done = function()
  for _, t in ipairs(threads) do
    local f = t:get("failed")
    for what, c in pairs(f or {}) do io.write(string.format("non-2xx %6d  %s\n", c, what)) end
  end
end
EOF
wrk -t1 -c4 -d1200s -s /tmp/edge-memory-urls.lua "http://127.0.0.1:$port" >"$out/memory-$db-wrk.txt" 2>&1 &
wrkpid=$!
sleep 5
kill -HUP $pid
for _ in $(seq 1 2400); do
  [ "$(fulls)" -gt "$before" ] && break
  sleep 0.5
done
# The load goes on through the job's end (the replaced state collected,
# its pages returned to the system) and a little after.
for _ in $(seq 1 600); do
  [ "$(grep -c '"msg":"job done","job":"views"' "$log")" -gt "$before" ] && break
  sleep 0.5
done
sleep 20
kill -INT $wrkpid 2>/dev/null || true
wait $wrkpid 2>/dev/null || true
peak=$(awk '/VmHWM/ {print $2}' /proc/$pid/status)
ns() { grep '"kind":"full"' "$log" | tail -1 | sed -n "s/.*\"$1\":\([0-9]*\).*/\1/p" | awk '{printf "%.1f s", $1/1e9}'; }
reload=$(ns load_time)
build=$(ns build_time)
reqs=$(awk '/requests in/ {print $1}' "$out/memory-$db-wrk.txt")
non2xx=$(awk '/Non-2xx/ {print $NF}' "$out/memory-$db-wrk.txt")
{
  echo "== $db: $listings listings, cache ${cache_mb} MiB, $(date -u +%FT%TZ)"
  printf 'start to first answer   %.1f s\n' "$first"
  printf 'figures published       %.1f s\n' "$figures"
  printf 'editions published      %.1f s (%s editions)\n' "$editions" "$n"
  printf 'steady RSS              %.0f MiB = %.0f B a listing\n' "$(echo "$steady/1024" | bc -l)" "$(echo "$steady*1024/$listings" | bc -l)"
  printf 'peak RSS (VmHWM)        %.0f MiB = %.0f B a listing\n' "$(echo "$peak/1024" | bc -l)" "$(echo "$peak*1024/$listings" | bc -l)"
  echo "full reload             load $reload, build $build"
  echo "requests during reload  ${reqs:-0}, non-2xx ${non2xx:-0}, latency max $(awk '/Latency/ {print $4}' "$out/memory-$db-wrk.txt")"
  grep '^non-2xx' "$out/memory-$db-wrk.txt" || true
} | tee -a "$out/memory.txt"
