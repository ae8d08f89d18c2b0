#!/usr/bin/env bash
# Cached answers side by side with nginx serving the same bytes as a static
# file, measured with wrk on this machine (loopback only, bounded runs).
#
#   bench/cached.sh [database] [seconds]
#
# Starts the local ClickHouse (deploy/clickhouse.sh) unless EDGE_CH_ADDR is
# set, an edge on 127.0.0.1:18090 over the given database (default
# bench_100k; seed it with `bench/run.sh foundation`), and nginx on
# 127.0.0.1:18091 with one worker per core, sendfile and ETags. For each
# answer it runs wrk against both for 200 and for 304 (If-None-Match).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
db=${1:-bench_100k}
secs=${2:-10}
conns=${WRK_CONNECTIONS:-64}
out=bench/out
mkdir -p "$out"

for p in nginx wrk; do
  if ! command -v "$p" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$p" ]; then
    echo "cached.sh: installing $p from Debian" >&2
    sudo=""; [ "$(id -u)" != 0 ] && sudo=sudo
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$([ $p = nginx ] && echo nginx-light || echo wrk)" >/dev/null
  fi
done
if [ -z "${EDGE_CH_ADDR:-}" ]; then deploy/clickhouse.sh start; export EDGE_CH_ADDR=127.0.0.1:19000; fi
GOEXPERIMENT=simd go build -o bin/edge ./cmd/edge

tmp=$(mktemp -d)
chmod 755 "$tmp" # nginx's workers run as another user: they must read the files
cleanup() { kill "$edge_pid" 2>/dev/null || true; [ -f "$tmp/nginx.pid" ] && kill "$(cat "$tmp/nginx.pid")" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT

# Limits far above what wrk sends: every call does the full accounting and is admitted.
EDGE_FAIR_USE_RATE=0 EDGE_ANON_PER_MINUTE=1000000000 EDGE_ANON_PER_DAY=1000000000000 \
  bin/edge serve --ch-database "$db" --listen 127.0.0.1:18090 --log-level warn &
edge_pid=$!
# Measure once every background job has run and is idle: the first
# editions and ranks builds take the CPU for tens of seconds.
for _ in $(seq 1 1800); do
  if curl -fs 127.0.0.1:18090/readyz 2>/dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin)
sys.exit(0 if d.get("figures") and all(j["runs"] > 0 and not j["running"] for j in d["jobs"]) else 1)' 2>/dev/null; then break; fi
  sleep 1
done

mkdir -p "$tmp/www/api/v1/categories" "$tmp/www/api"
paths=("/api/v1/categories/chrome" "/api/extensions?platform=0" "/api/summary")
files=("api/v1/categories/chrome" "api/extensions-platform0" "api/summary")
for i in "${!paths[@]}"; do
  curl -fs "127.0.0.1:18090${paths[$i]}" -o "$tmp/www/${files[$i]}"
done
cat > "$tmp/nginx.conf" <<CONF
worker_processes auto;
pid $tmp/nginx.pid;
error_log $tmp/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on; tcp_nopush on; keepalive_requests 1000000;
  default_type application/json;
  etag on;
  server { listen 127.0.0.1:18091; root $tmp/www; }
}
CONF
nginx -c "$tmp/nginx.conf"
sleep 0.5
# Both must serve the same bytes with a 200, or the comparison means nothing.
for i in "${!paths[@]}"; do
  curl -fs "127.0.0.1:18091/${files[$i]}" | cmp -s - "$tmp/www/${files[$i]}" || { echo "nginx does not serve ${files[$i]} as edge does" >&2; exit 1; }
done

run() { # name url [etag]
  local hdr=()
  [ -n "${3:-}" ] && hdr=(-H "If-None-Match: $3")
  local rps
  rps=$(wrk -t2 -c"$conns" -d"${secs}s" "${hdr[@]}" "$2" | awk '/Requests\/sec/ {r=$2} /Transfer\/sec/ {t=$2} /Non-2xx/ {e=$0} END {print r, t, e}')
  printf '%-44s %s\n' "$1" "$rps"
}
{
  echo "== cached answers, wrk -t2 -c$conns -d${secs}s, database $db, $(date -u +%FT%TZ)"
  for i in "${!paths[@]}"; do
    size=$(wc -c < "$tmp/www/${files[$i]}")
    e_tag=$(curl -sI "127.0.0.1:18090${paths[$i]}" | awk -F': ' 'tolower($1)=="etag" {print $2}' | tr -d '\r')
    n_tag=$(curl -sI "127.0.0.1:18091/${files[$i]}" | awk -F': ' 'tolower($1)=="etag" {print $2}' | tr -d '\r')
    run "edge  200 ${paths[$i]} (${size} B)" "http://127.0.0.1:18090${paths[$i]}"
    run "nginx 200 same bytes" "http://127.0.0.1:18091/${files[$i]}"
    run "edge  304 ${paths[$i]}" "http://127.0.0.1:18090${paths[$i]}" "$e_tag"
    run "nginx 304 same bytes" "http://127.0.0.1:18091/${files[$i]}" "$n_tag"
  done
} | tee -a "$out/cached.txt"
