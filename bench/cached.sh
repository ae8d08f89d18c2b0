#!/usr/bin/env bash
# Cached answers (and a page for people) side by side with nginx serving
# the same bytes as a static file, measured with wrk on this machine
# (loopback only, bounded runs).
#
#   bench/cached.sh [database] [seconds] [rounds]
#
# Starts the local ClickHouse (deploy/clickhouse.sh) unless EDGE_CH_ADDR is
# set, an edge on 127.0.0.1:18090 over the given database (default
# bench_100k; seed it with `bench/run.sh foundation`), and nginx on
# 127.0.0.1:18091 with one worker per core, sendfile, tcp_nopush and ETags.
# For each answer it runs wrk against both for 200 and for 304
# (If-None-Match) in rounds (default 9 rounds of 2 s), the two back to back
# and in turns first (so that a drift of the machine's speed weighs on
# both alike), and prints each one's median requests a second, the median
# of the rounds' ratios of the edge to nginx (each ratio from two
# adjacent runs, the figure least moved by the machine's drift), and the
# median CPU time each server spent per request (from /proc, user plus
# system).
#
# BENCH_ENCODING=gzip (or br) asks every answer compressed: the edge
# serves its precompressed variant, and nginx the same bytes as a .gz (or
# .br) file beside the plain one with gzip_static (brotli_static, from
# Debian's libnginx-mod-http-brotli-static), as a static site serves
# precompressed files.
#
# BENCH_FLOOR=1 also measures bench/floor, the leanest Go server this
# benchmark has (no framework, no limits: the request line, one header,
# fixed headers, sendfile from 16 KB), serving the same bytes on
# 127.0.0.1:18097: what any Go server can reach on this machine.
#
# BENCH_PIN=1 gives each side a core of its own, as a server with remote
# clients sees it: the edge (GOMAXPROCS=1) and one nginx worker on core 0,
# a single-threaded wrk on core 1. Without it, all share both cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
db=${1:-bench_100k}
secs=${2:-2}
rounds=${3:-9}
conns=${WRK_CONNECTIONS:-64}
out=bench/out
mkdir -p "$out"

. bench/lib.sh
enc=${BENCH_ENCODING:-identity}
case $enc in identity | gzip | br) ;; *) echo "BENCH_ENCODING: identity, gzip or br" >&2; exit 2 ;; esac
sudo=""; [ "$(id -u)" != 0 ] && sudo=sudo
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
  echo "cached.sh: installing nginx from Debian" >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null
fi
brotli_module=/usr/lib/nginx/modules/ngx_http_brotli_static_module.so
if [ "$enc" = br ] && [ ! -f "$brotli_module" ]; then
  echo "cached.sh: installing nginx's brotli_static module from Debian" >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libnginx-mod-http-brotli-static >/dev/null
fi
bench_prepare

tmp=$(mktemp -d)
chmod 755 "$tmp" # nginx's workers run as another user: they must read the files
floor=${BENCH_FLOOR:-0} floor_pid=""
cleanup() { kill "$edge_pid" $floor_pid 2>/dev/null || true; [ -f "$tmp/nginx.pid" ] && kill "$(cat "$tmp/nginx.pid")" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

pin=() workers=auto mode="wrk, edge and nginx share the cores"
if [ "${BENCH_PIN:-}" = 1 ]; then
  pin=(env GOMAXPROCS=1 taskset -c 0) workers="1; worker_cpu_affinity 01"
  wrk_cmd="taskset -c 1 wrk -t1" mode="pinned: edge or nginx on core 0, wrk on core 1"
fi
# Limits far above what wrk sends: every call does the full accounting and is admitted.
EDGE_FAIR_USE_RATE=0 EDGE_ANON_PER_MINUTE=1000000000 EDGE_ANON_PER_DAY=1000000000000 EDGE_PAGE_RATE=1000000000 EDGE_PAGE_BURST=1000000000 \
  "${pin[@]}" bin/edge serve --ch-database "$db" --listen 127.0.0.1:18090 --log-level warn --exports-schedule off &
edge_pid=$!
# Measure once every background job has run and is idle: the first
# editions and ranks builds take the CPU for tens of seconds.
for _ in $(seq 1 1800); do
  if curl -fs 127.0.0.1:18090/readyz 2>/dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin)
sys.exit(0 if d.get("figures") and all(j["runs"] > 0 and not j["running"] for j in d["jobs"]) else 1)' 2>/dev/null; then break; fi
  sleep 1
done
# and once the published answers are precompressed (issue 21; an edge
# without precompression has no such metric).
for _ in $(seq 1 300); do
  curl -fs 127.0.0.1:18090/metrics | grep -q '^edge_precompress_round_seconds_count [1-9]' && break
  curl -fs 127.0.0.1:18090/metrics | grep -q '^edge_precompress_round_seconds' || break
  sleep 1
done

# v1 small and large, legacy small and large, and a page for people (a
# store's page: what a dashboard reader opens; nginx serves it as
# text/html).
paths=("/api/v1/categories/chrome" "/api/v1/listings" "/api/summary" "/api/extensions?platform=0" "/stores/chrome")
files=("api/v1/categories/chrome" "api/v1/listings" "api/summary" "api/extensions-platform0" "stores/chrome")
mkdir -p "$tmp/www/api/v1/categories" "$tmp/www/stores"
ext="" static="" module="" ae=()
case $enc in
  gzip) ext=.gz static="gzip_static on;" ;;
  br) ext=.br static="brotli_static on;" module="load_module $brotli_module;" ;;
esac
[ "$enc" != identity ] && ae=(-H "Accept-Encoding: $enc")
for i in "${!paths[@]}"; do
  curl -fs "127.0.0.1:18090${paths[$i]}" -o "$tmp/www/${files[$i]}"
  # The edge's own compressed bytes, for nginx to serve as they are.
  [ "$enc" != identity ] && curl -fs "${ae[@]}" "127.0.0.1:18090${paths[$i]}" -o "$tmp/www/${files[$i]}$ext"
done
cat > "$tmp/nginx.conf" <<CONF
$module
worker_processes $workers;
pid $tmp/nginx.pid;
error_log $tmp/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on; tcp_nopush on; keepalive_requests 1000000;
  default_type application/json;
  etag on;
  $static
  server { listen 127.0.0.1:18091; root $tmp/www; location /stores/ { default_type "text/html; charset=utf-8"; } }
}
CONF
nginx -c "$tmp/nginx.conf"
sleep 0.5
# Both must serve the same bytes with a 200, or the comparison means nothing.
for i in "${!paths[@]}"; do
  curl -fs "${ae[@]}" "127.0.0.1:18091/${files[$i]}" | cmp -s - "$tmp/www/${files[$i]}$ext" || { echo "nginx does not serve ${files[$i]} as edge does" >&2; exit 1; }
  curl -fs "${ae[@]}" "127.0.0.1:18090${paths[$i]}" | cmp -s - "$tmp/www/${files[$i]}$ext" || { echo "the edge's ${paths[$i]} changed" >&2; exit 1; }
done
nginx_pids=$(pgrep -f "nginx: worker process" | tr '\n' ' ')
servers=(edge nginx)
if [ "$floor" = 1 ]; then
  go build -o "$tmp/floor" ./bench/floor
  for i in "${!paths[@]}"; do
    mkdir -p "$(dirname "$tmp/floor-www/${files[$i]}")"
    cp "$tmp/www/${files[$i]}$ext" "$tmp/floor-www/${files[$i]}"
  done
  fenc=""; [ "$enc" != identity ] && fenc=$enc
  "${pin[@]}" "$tmp/floor" --dir "$tmp/floor-www" --listen 127.0.0.1:18097 --encoding "$fenc" &
  floor_pid=$!
  sleep 0.3
  for i in "${!paths[@]}"; do
    curl -fs "127.0.0.1:18097/${files[$i]}" | cmp -s - "$tmp/www/${files[$i]}$ext" || { echo "floor does not serve ${files[$i]} as edge does" >&2; exit 1; }
  done
  servers=(edge floor nginx)
fi

# cpu_ticks <pid...> prints the processes' user plus system clock ticks.
cpu_ticks() { for p in "$@"; do awk '{print $14 + $15}' "/proc/$p/stat"; done | awk '{t += $1} END {print t}'; }
# measure <name> <url> <pids> [wrk flags...]: one wrk run, with the
# servers' CPU microseconds per request appended.
measure() {
  local name=$1 url=$2 pids=$3 before line rps hz
  shift 3
  hz=$(getconf CLK_TCK)
  # shellcheck disable=SC2086
  before=$(cpu_ticks $pids)
  line=$(wrk_run "$name" "$url" "$@")
  rps=$(awk '{for (i = 3; i <= NF; i++) if ($i ~ /^[0-9.]+$/) {print $i; exit}}' <<<"$line")
  # shellcheck disable=SC2086
  awk -v l="$line" -v b="$before" -v a="$(cpu_ticks $pids)" -v r="$rps" -v s="$secs" -v hz="$hz" \
    'BEGIN {printf "%s  %.1f us/req\n", l, (a - b) * 1e6 / hz / (r * s)}'
}

log="$tmp/rounds.txt"
{
  echo "== cached answers, ${wrk_cmd:-wrk -t2} -c$conns -d${secs}s, $rounds rounds, $mode, Accept-Encoding $enc, database $db, $(date -u +%FT%TZ)"
  for r in $(seq 1 "$rounds"); do
    for i in "${!paths[@]}"; do
      e_tag=$(curl -sI "${ae[@]}" "127.0.0.1:18090${paths[$i]}" | awk -F': ' 'tolower($1)=="etag" {print $2}' | tr -d '\r')
      n_tag=$(curl -sI "${ae[@]}" "127.0.0.1:18091/${files[$i]}" | awk -F': ' 'tolower($1)=="etag" {print $2}' | tr -d '\r')
      f_tag=""
      [ "$floor" = 1 ] && f_tag=$(curl -sI "127.0.0.1:18097/${files[$i]}" | awk -F': ' 'tolower($1)=="etag" {print $2}' | tr -d '\r')
      for status in 200 304; do
        e_flags=("${ae[@]}") n_flags=("${ae[@]}") f_flags=("${ae[@]}")
        [ "$status" = 304 ] && e_flags+=(-H "If-None-Match: $e_tag") n_flags+=(-H "If-None-Match: $n_tag") f_flags+=(-H "If-None-Match: $f_tag")
        order=("${servers[@]}")
        [ $((r % 2)) = 0 ] && order=($(printf '%s\n' "${servers[@]}" | tac))
        for server in "${order[@]}"; do
          if [ "$server" = edge ]; then
            measure "round $r  p$i-$status edge" "http://127.0.0.1:18090${paths[$i]}" "$edge_pid" "${e_flags[@]}"
          elif [ "$server" = floor ]; then
            measure "round $r  p$i-$status floor" "http://127.0.0.1:18097/${files[$i]}" "$floor_pid" "${f_flags[@]}"
          else
            measure "round $r  p$i-$status nginx" "http://127.0.0.1:18091/${files[$i]}" "$nginx_pids" "${n_flags[@]}"
          fi
        done
      done
    done
  done
} | tee "$log"

# Medians per answer and status: requests a second (the edge against
# nginx) and CPU per request.
{
  echo "== medians of $rounds rounds"
  for i in "${!paths[@]}"; do
    size=$(wc -c < "$tmp/www/${files[$i]}$ext")
    for status in 200 304; do
      echo "-- ${paths[$i]} (${size} B), $status"
      grep "^round [0-9]*  p$i-$status " "$log" | sed "s/  p$i-$status / /" > "$tmp/group.txt"
      medians nginx < "$tmp/group.txt"
      for who in "${servers[@]}"; do
        [ "$who" = nginx ] && continue
        awk -v who="$who" '{v = $3; for (i = 4; i <= NF; i++) if ($i ~ /^[0-9.]+$/) { r = $i; break }; rate[$2, v] = r; rounds[$2] = 1}
          END { m = 0; for (k in rounds) if (rate[k, "nginx"] > 0) a[++m] = rate[k, who] / rate[k, "nginx"]
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            printf "paired %s/nginx, median of %d rounds  %.3fx (lowest %.3fx, highest %.3fx)\n", who, m, (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2, a[1], a[m] }' "$tmp/group.txt"
      done
      awk '{v[$3] = v[$3] " " $(NF-1)} END {for (w in v) print w, v[w]}' "$tmp/group.txt" |
        awk '{m = NF - 1; for (i = 1; i <= m; i++) a[i] = $(i + 1)
          for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
          printf "cpu    %-24s %10.1f us/request\n", $1, (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2}' | sort
    done
  done
} | tee -a "$log"
cat "$log" >> "$out/cached.txt"
