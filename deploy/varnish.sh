#!/usr/bin/env bash
# Runs Varnish with deploy/varnish.vcl in front of the edge of `make run`
# (127.0.0.1:8080), in the foreground, on 127.0.0.1:6081 (override with
# EDGE_VARNISH_LISTEN; the backend with EDGE_VARNISH_BACKEND=host:port).
# Installs Debian's varnish package when it is missing (make deps does too).
#
#   make cdn     # then: curl -si 127.0.0.1:6081/api/summary (twice: X-Cache: HIT)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
listen=${EDGE_VARNISH_LISTEN:-127.0.0.1:6081}
backend=${EDGE_VARNISH_BACKEND:-127.0.0.1:8080}
bin=$(command -v varnishd || echo /usr/sbin/varnishd)
if [ ! -x "$bin" ]; then
  "$root/deploy/deps.sh"
fi
work=${EDGE_VAR_DIR:-$root/.var}/varnish
mkdir -p "$work"
sed -e "s|\.host = \"127.0.0.1\";|.host = \"${backend%:*}\";|" -e "s|\.port = \"8080\";|.port = \"${backend##*:}\";|" \
  "$root/deploy/varnish.vcl" > "$work/edge.vcl"
echo "varnish.sh: Varnish on http://$listen in front of the edge at $backend (Ctrl-C stops it)" >&2
exec "$bin" -F -j none -a "$listen" -f "$work/edge.vcl" -n "$work/work" -s malloc,256m
