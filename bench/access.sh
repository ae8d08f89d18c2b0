#!/usr/bin/env bash
# The cost of keys and limits on a cached answer: the same answer from an
# edge without limits (--no-limits), and from an edge with them, called
# without a key (per-address accounting) and with a key (hash check plus
# per-key accounting), measured with wrk in alternating rounds.
#
#   bench/access.sh [database] [seconds] [rounds]
#
# Limits are raised far above what wrk sends, so every call is admitted
# and does the full work: key check, minute window, day count, headers.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
db=${1:-bench_100k}
secs=${2:-10}
rounds=${3:-3}
conns=${WRK_CONNECTIONS:-64}
path=${BENCH_PATH:-/api/v1/categories/chrome}
out=bench/out
mkdir -p "$out"

command -v wrk >/dev/null 2>&1 || { sudo=""; [ "$(id -u)" != 0 ] && sudo=sudo; $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; }
if [ -z "${EDGE_CH_ADDR:-}" ]; then deploy/clickhouse.sh start; export EDGE_CH_ADDR=127.0.0.1:19000; fi
GOEXPERIMENT=simd go build -o bin/edge ./cmd/edge
bin/edge migrate --ch-database "$db" >/dev/null

pids=()
tmpout=$(mktemp)
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -f "$tmpout"; }
trap cleanup EXIT
common=(--ch-database "$db" --log-level warn --editions-schedule off --ranks-schedule off)
bin/edge serve "${common[@]}" --listen 127.0.0.1:18093 --no-limits & pids+=($!)
EDGE_ANON_PER_MINUTE=1000000000 EDGE_ANON_PER_DAY=1000000000000 EDGE_KEY_PER_MINUTE=1000000000 \
  bin/edge serve "${common[@]}" --listen 127.0.0.1:18094 & pids+=($!)

email="bench-$(date +%s)@example.com"
echo "a bench password" | bin/edge account create --ch-database "$db" --email "$email" >/dev/null
key=$(bin/edge key create --ch-database "$db" --email "$email" 2>/dev/null)
id=${key%_*}
bin/edge key limit --ch-database "$db" --id "$id" --daily 1000000000000 >/dev/null

for port in 18093 18094; do
  for _ in $(seq 1 600); do
    if curl -fs "127.0.0.1:$port/readyz" | grep -q '"figures":true'; then break; fi
    sleep 1
  done
done
# The key works once the edge's key list has reloaded.
for _ in $(seq 1 60); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" "127.0.0.1:18094$path")" = 200 ] && break
  sleep 1
done
curl -s -D - -o /dev/null -H "Authorization: Bearer $key" "127.0.0.1:18094$path" | grep -i '^ratelimit-policy' >&2

run() { # name url [header]
  local hdr=()
  [ -n "${3:-}" ] && hdr=(-H "$3")
  wrk -t2 -c"$conns" -d"${secs}s" "${hdr[@]}" "$2" | awk -v n="$1" '/Requests\/sec/ {r=$2} /Non-2xx/ {e=$0} END {printf "%-34s %s %s\n", n, r, e}'
}
{
  echo "== keys and limits on a cached answer ($path), wrk -t2 -c$conns -d${secs}s, $rounds rounds, database $db, $(date -u +%FT%TZ)"
  for r in $(seq 1 "$rounds"); do
    run "round $r  no limits" "http://127.0.0.1:18093$path"
    run "round $r  limits, no key" "http://127.0.0.1:18094$path"
    run "round $r  limits, Bearer key" "http://127.0.0.1:18094$path" "Authorization: Bearer $key"
  done
} | tee "$tmpout"
# Medians per variant, and their ratio to the edge without limits.
awk '{v=$3" "$4" "$5; sub(/ +[0-9.]+ *$/, "", v); n[v]++; r[v, n[v]]=$NF}
  END {
    for (v in n) { m = n[v]; for (i = 1; i <= m; i++) a[i] = r[v, i]
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      med[v] = (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
    base = med["no limits"]
    for (v in med) printf "median %-22s %10.0f req/s  %.3fx\n", v, med[v], med[v] / base
  }' <(grep '^round' "$tmpout") | sort | tee -a "$tmpout"
cat "$tmpout" >> "$out/access.txt"
