#!/usr/bin/env bash
# Installs what `make test` needs on a fresh Debian machine, from Debian's
# packages, only when missing: a ClickHouse server (the integration tests
# start their own), ZooKeeper with Java (the cluster tests start their own),
# Varnish (the CDN test puts it in front of the edge), Chromium (the browser
# test), binutils' objdump (a test of the SIMD kernels' instructions) and
# Node.js 20+ with the pinned MCP clients (deploy/node.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

"$root/deploy/clickhouse.sh" install

# apt_install PACKAGE [SERVICE]: installs a Debian package; a system
# service it starts (the tests start their own) is stopped and disabled.
apt_install() {
  echo "deps.sh: installing Debian's $1 package" >&2
  local sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "$1" >/dev/null
  if [ -n "${2:-}" ]; then $sudo systemctl disable --now "$2" >/dev/null 2>&1 || true; fi
}

# Varnish: the CDN tests put it in front of the edge (the package starts a
# system varnish on port 6081).
if ! command -v varnishd >/dev/null 2>&1 && [ ! -x /usr/sbin/varnishd ]; then
  apt_install varnish varnish
fi

# Chromium: the browser test renders /docs and calls the APIs from a page
# of another origin in it.
if ! command -v chromium >/dev/null 2>&1; then
  apt_install chromium
fi

# objdump (binutils, which gcc brings on most machines): a test reads the
# project's instructions in its own binary (views/listq, no AVX-512).
if ! command -v objdump >/dev/null 2>&1; then
  apt_install binutils
fi

# ZooKeeper (with Java): the cluster tests start their own, with two
# shards of ClickHouse 18.16 around it (analytics/chtest, StartCluster).
if [ ! -f /usr/share/java/zookeeper.jar ]; then
  apt_install zookeeper zookeeper
fi

"$root/deploy/node.sh" >/dev/null
