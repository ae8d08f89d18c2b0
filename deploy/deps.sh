#!/usr/bin/env bash
# Installs what `make test` needs on a fresh Debian machine, from Debian's
# packages, only when missing: a ClickHouse server (the integration tests
# start their own), ZooKeeper with Java (the cluster tests start their own),
# Varnish (the CDN test puts it in front of the edge), Chromium (the browser
# test) and Node.js 20+ with the pinned MCP clients (deploy/node.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/deploy/clickhouse.sh" install

if ! command -v varnishd >/dev/null 2>&1 && [ ! -x /usr/sbin/varnishd ]; then
  echo "deps.sh: installing Debian's varnish package" >&2
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq varnish >/dev/null
  # The package starts a system varnish on port 6081; the tests start their own.
  $sudo systemctl disable --now varnish >/dev/null 2>&1 || true
fi

# Chromium: the browser test renders /docs and calls the APIs from a page
# of another origin in it.
if ! command -v chromium >/dev/null 2>&1; then
  echo "deps.sh: installing Debian's chromium package" >&2
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq chromium >/dev/null
fi

# ZooKeeper (with Java): the cluster tests start their own, with two
# shards of ClickHouse 18.16 around it (analytics/chtest, StartCluster).
if [ ! -f /usr/share/java/zookeeper.jar ]; then
  echo "deps.sh: installing Debian's zookeeper package" >&2
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq zookeeper >/dev/null
  # The package may start a system ZooKeeper on 2181; the tests start their own.
  $sudo systemctl disable --now zookeeper >/dev/null 2>&1 || true
fi

"$root/deploy/node.sh" >/dev/null
