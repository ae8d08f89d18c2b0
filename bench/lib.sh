# Shared by the wrk benchmarks (bench/access.sh, bench/tools.sh,
# bench/cached.sh); sourced,
# not run. Expects $db, $secs and $conns, and the repository as the
# working directory.

# bench_prepare installs wrk from Debian if missing, starts the local
# ClickHouse unless EDGE_CH_ADDR is set, builds the edge and brings the
# schema of $db up to date.
bench_prepare() {
  command -v wrk >/dev/null 2>&1 || { local sudo=""; [ "$(id -u)" != 0 ] && sudo=sudo; $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
  if [ -z "${EDGE_CH_ADDR:-}" ]; then deploy/clickhouse.sh start; export EDGE_CH_ADDR=127.0.0.1:19000; fi
  GOEXPERIMENT=simd go build -o bin/edge ./cmd/edge
  bin/edge migrate --ch-database "$db" >/dev/null
}

# wait_ready <port> waits until the edge on that port has its figures.
wait_ready() {
  for _ in $(seq 1 600); do
    if curl -fs "127.0.0.1:$1/readyz" | grep -q '"figures":true'; then return; fi
    sleep 1
  done
}

# wrk_run <name> <url> [wrk flags...] runs wrk once and prints the name,
# the requests a second, and any count of non-2xx answers. $wrk_cmd, when
# set, replaces "wrk -t2" (to pin wrk to a core, for instance).
wrk_run() {
  local name=$1 url=$2
  shift 2
  ${wrk_cmd:-wrk -t2} -c"$conns" -d"${secs}s" "$@" "$url" | awk -v n="$name" '/Requests\/sec/ {r=$2} /Non-2xx/ {e=$0} END {printf "%-34s %s %s\n", n, r, e}'
}

# medians <base> reads "round <n>  <variant>  <req/s> ..." lines and prints
# each variant's median with its ratio to the base variant's median and
# its cost (the inverse: how many base answers one of its answers costs).
medians() {
  awk -v base="$1" '/^round/ {v = ""; for (i = 3; i <= NF; i++) { if ($i ~ /^[0-9.]+$/) break; v = v (v == "" ? "" : " ") $i }
      n[v]++; r[v, n[v]] = $i}
    END {
      for (v in n) { m = n[v]; for (i = 1; i <= m; i++) a[i] = r[v, i]
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        med[v] = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
      for (v in med) printf "median %-24s %10.0f req/s  %.3fx of %s, cost %.2fx\n", v, med[v], med[v] / med[base], base, med[base] / med[v]
    }' | sort
}

# misses_prepare is bench_prepare and bin/misses, with the edge that
# misses_edge starts (edge_pid) stopped when the script exits. With
# BENCH_PIN=1 the edge runs on core 0 alone (GOMAXPROCS=1) and the load
# generators (wrk, bin/misses) on core 1, as if the clients were another
# machine's: edge_pin and gen_pin are the commands' prefixes.
misses_prepare() {
  edge_pin=() gen_pin=()
  if [ "${BENCH_PIN:-0}" = 1 ]; then
    edge_pin=(env GOMAXPROCS=1 taskset -c 0) gen_pin=(taskset -c 1)
  fi
  pin_mode="edge and load generators on the same $(nproc) cores"
  [ "${BENCH_PIN:-0}" = 1 ] && pin_mode="pinned: the edge on core 0, the load generators on core 1"
  bench_prepare
  GOEXPERIMENT=simd go build -o bin/misses ./bench/misses
  edge_pid=""
  trap '[ -n "$edge_pid" ] && kill "$edge_pid" 2>/dev/null || true' EXIT
}

# misses_edge <port> [VAR=value...] starts an edge over $db for the
# benchmarks of uncached queries (bench/overload.sh, bench/misses.sh): the
# limits off, no job but the views' first load (the hourly reload and the
# five-minute refresh are put off to New Year: either would fall in the
# measurements, and the database does not change), a 1 GiB answer cache,
# and the EDGE_* settings given. It sets edge_pid and returns once the edge has its
# figures and their first precompression round.
misses_edge() {
  local port=$1
  shift
  env EDGE_FAIR_USE_RATE=0 EDGE_ANON_PER_MINUTE=1000000000 EDGE_ANON_PER_DAY=1000000000000 EDGE_SEARCH_RATE=0 "$@" \
    "${edge_pin[@]}" bin/edge serve --ch-database "$db" --listen "127.0.0.1:$port" --log-level warn \
    --editions-schedule off --ranks-schedule off --exports-schedule off --cache-mb 1024 \
    --full-schedule "0 0 1 1 *" --refresh-schedule "0 0 1 1 *" &
  edge_pid=$!
  wait_ready "$port"
  for _ in $(seq 1 120); do
    curl -fs "127.0.0.1:$port/metrics" | grep -q '^edge_precompress_round_seconds_count [1-9]' && break
    sleep 1
  done
  curl -fs "127.0.0.1:$port/api/summary" >/dev/null
}

# summary_hits <port> <seconds> asks the cached /api/summary with wrk (16
# connections, on gen_pin's core) and prints its rate and latency.
summary_hits() {
  "${gen_pin[@]}" wrk -t1 -c16 -d"$2s" --latency "http://127.0.0.1:$1/api/summary" |
    awk '/Requests\/sec/ {r=$2} /^ +99%/ {p=$2} /^ +50%/ {m=$2} /Non-2xx/ {e=$0} END {printf "cached /api/summary  %s req/s  p50 %s  p99 %s %s\n", r, m, p, e}'
}

# zk_start <port> <dir> starts a ZooKeeper (Debian's package, as make
# deps installs it) on 127.0.0.1:<port> with its data in <dir> and its log
# in <dir>.log, waits until it answers, and leaves its pid in ZK_PID.
zk_start() {
  mkdir -p "$2"
  printf 'tickTime=500\ndataDir=%s\nclientPort=%s\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n' "$2" "$1" >"$2/zoo.cfg"
  java -Xmx256m -XX:+UseSerialGC -cp '/usr/share/java/zookeeper.jar:/usr/share/java/zookeeper-jute.jar:/usr/share/java/*' \
    org.apache.zookeeper.server.quorum.QuorumPeerMain "$2/zoo.cfg" >"$2.log" 2>&1 &
  ZK_PID=$!
  until (exec 3<>/dev/tcp/127.0.0.1/"$1") 2>/dev/null; do sleep 0.2; done
}
