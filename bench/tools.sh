#!/usr/bin/env bash
# A tools/call of a cached read against the REST answer to the same read:
# GET /api/v1/stores/chrome/stats, and store_stats {"store": "chrome"} over
# /mcp in both protocol eras (2025-11-25, and 2026-07-28 with its _meta and
# headers), measured with wrk in alternating rounds on one edge.
#
#   bench/tools.sh [database] [seconds] [rounds]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
db=${1:-bench_100k}
secs=${2:-8}
rounds=${3:-3}
conns=${WRK_CONNECTIONS:-64}
out=bench/out
mkdir -p "$out"

. bench/lib.sh
bench_prepare

tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
# Limits far above what wrk sends: every call is counted and admitted.
EDGE_ANON_PER_MINUTE=1000000000 EDGE_ANON_PER_DAY=1000000000000 \
  bin/edge serve --ch-database "$db" --listen 127.0.0.1:18095 --log-level warn --editions-schedule off --ranks-schedule off &
pid=$!
wait_ready 18095

cat > "$tmp/legacy.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"store_stats","arguments":{"store":"chrome"}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Protocol-Version"] = "2025-11-25"
LUA
cat > "$tmp/modern.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"store_stats","arguments":{"store":"chrome"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "store_stats"
LUA
# It must answer a result, not an error.
curl -fs -X POST -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H 'Mcp-Protocol-Version: 2025-11-25' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"store_stats","arguments":{"store":"chrome"}}}' 127.0.0.1:18095/mcp | grep -q '"structuredContent"' \
  || { echo "tools.sh: tools/call does not answer a result" >&2; exit 1; }

res="$tmp/res.txt"
{
  echo "== tools/call against REST for a cached read, wrk -t2 -c$conns -d${secs}s, $rounds rounds, database $db, $(date -u +%FT%TZ)"
  for r in $(seq 1 "$rounds"); do
    wrk_run "round $r  rest GET" "http://127.0.0.1:18095/api/v1/stores/chrome/stats"
    wrk_run "round $r  tools/call 2025-11-25" "http://127.0.0.1:18095/mcp" -s "$tmp/legacy.lua"
    wrk_run "round $r  tools/call 2026-07-28" "http://127.0.0.1:18095/mcp" -s "$tmp/modern.lua"
  done
} | tee "$res"
medians "rest GET" < "$res" | tee -a "$res"
cat "$res" >> "$out/tools.txt"
