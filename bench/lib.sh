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
