#!/usr/bin/env bash
# Local ClickHouse for development and tests.
#
#   deploy/clickhouse.sh install   install Debian's clickhouse-server package if no server binary is found
#   deploy/clickhouse.sh start     install if needed, then start a server on loopback (idempotent)
#   deploy/clickhouse.sh stop      stop the server started by 'start'
#   deploy/clickhouse.sh status    say whether it answers
#
# The server listens on 127.0.0.1 only, on non-default ports (native 19000,
# HTTP 18123; override with EDGE_LOCAL_CH_PORT and EDGE_LOCAL_CH_HTTP_PORT) so it
# never collides with a system server, and keeps its data under ./.var/clickhouse
# (EDGE_VAR_DIR moves it).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
var=${EDGE_VAR_DIR:-$root/.var}/clickhouse
tcp=${EDGE_LOCAL_CH_PORT:-19000}
http=${EDGE_LOCAL_CH_HTTP_PORT:-18123}

server_cmd() {
  if command -v clickhouse-server >/dev/null 2>&1; then echo clickhouse-server
  elif [ -x /usr/sbin/clickhouse-server ]; then echo /usr/sbin/clickhouse-server
  elif command -v clickhouse >/dev/null 2>&1; then echo "clickhouse server"
  fi
}

install() {
  if [ -n "$(server_cmd)" ]; then return 0; fi
  echo "clickhouse.sh: installing Debian's clickhouse-server package" >&2
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "clickhouse.sh: need root or sudo to install clickhouse-server" >&2; exit 1; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  # The package's post-install may try to start a system service; in
  # containers that is refused, which is fine: we start our own server.
  $sudo apt-get install -y -qq clickhouse-server clickhouse-client >/dev/null
  [ -n "$(server_cmd)" ] || { echo "clickhouse.sh: clickhouse-server still not found after install" >&2; exit 1; }
}

answers() {
  # HTTP /ping answers "Ok." when the server is up; bash's /dev/tcp needs no
  # curl. A server still loading its tables may accept the connection and
  # answer nothing: give up on that try after 2 s (one such try held start
  # for 15 minutes).
  timeout 2 bash -c '(exec 3<>"/dev/tcp/127.0.0.1/$1" && printf "GET /ping HTTP/1.0\r\n\r\n" >&3 && grep -q Ok <&3) 2>/dev/null' _ "$http"
}

start() {
  install
  if answers; then echo "clickhouse.sh: ClickHouse already answers on 127.0.0.1:$tcp" >&2; return 0; fi
  mkdir -p "$var"
  sed -e "s|@DIR@|$var|g" -e "s|@TCP@|$tcp|g" -e "s|@HTTP@|$http|g" \
    "$root/deploy/clickhouse.xml.tmpl" > "$var/config.xml"
  # shellcheck disable=SC2046
  # Only the server is put in the background, with every descriptor of
  # its own: `a && b &` would background the list in a shell that keeps
  # the caller's stdout and stderr, and `make clickhouse | tail` would
  # wait on them for as long as the server runs.
  (cd "$var" || exit 1; setsid nohup $(server_cmd) --config-file="$var/config.xml" >"$var/stdout.log" 2>&1 </dev/null &)
  for _ in $(seq 1 120); do
    if answers; then echo "clickhouse.sh: ClickHouse started on 127.0.0.1:$tcp (data in $var)" >&2; return 0; fi
    sleep 0.5
  done
  echo "clickhouse.sh: ClickHouse did not start; see $var/server.err.log and $var/stdout.log" >&2
  tail -20 "$var/server.err.log" "$var/stdout.log" >&2 2>/dev/null || true
  exit 1
}

# pids prints the pid of the server started from this folder's config.
pids() { pgrep -f -- "--config-file=$var/config.xml" || true; }

stop() {
  for pid in $(pids); do
    kill "$pid" 2>/dev/null || true
    # A server busy merging can take a while to stop: wait for it.
    for _ in $(seq 1 240); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
    if kill -0 "$pid" 2>/dev/null; then echo "clickhouse.sh: server $pid still running after 60s" >&2; exit 1; fi
  done
  echo "clickhouse.sh: stopped" >&2
}

case "${1:-start}" in
  install) install ;;
  start) start ;;
  stop) stop ;;
  status) if answers; then echo "up on 127.0.0.1:$tcp"; else echo "down"; exit 1; fi ;;
  *) echo "usage: $0 install|start|stop|status" >&2; exit 2 ;;
esac
