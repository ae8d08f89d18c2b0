#!/usr/bin/env bash
# Makes Node.js 20 or newer available for the MCP client tests and
# installs the pinned clients (mcp/testdata/clients/package-lock.json) and
# the pages' browser audits (edge/testdata/pages/package-lock.json), and
# the current ClickHouse engine the SQL tests replay statements on (npm's
# chdb: analytics/chtest/chdb/node/package-lock.json).
#
#   deploy/node.sh   prints the directory holding the node to use
#
# Uses the system's node when it is 20 or newer; otherwise downloads the
# official Node.js 20 LTS build for this machine into .var/node (Debian 12's
# own package is Node 18, which the v2 client does not support).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
version=v20.19.5
bindir=""
if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 20 ] && command -v npm >/dev/null 2>&1; then
  bindir=$(dirname "$(command -v node)")
elif [ -x "$root/.var/node/bin/node" ]; then
  bindir="$root/.var/node/bin"
else
  case "$(uname -m)" in
    x86_64) arch=x64 ;;
    aarch64) arch=arm64 ;;
    *) echo "node.sh: no Node.js build for $(uname -m)" >&2; exit 1 ;;
  esac
  echo "node.sh: installing Node.js $version into .var/node" >&2
  mkdir -p "$root/.var/node"
  curl -fsSL "https://nodejs.org/dist/$version/node-$version-linux-$arch.tar.xz" | tar -xJ -C "$root/.var/node" --strip-components=1
  bindir="$root/.var/node/bin"
fi
clients="$root/mcp/testdata/clients"
if [ ! -d "$clients/node_modules/@modelcontextprotocol/client" ] || [ "$clients/package-lock.json" -nt "$clients/node_modules/.package-lock.json" ]; then
  echo "node.sh: installing the pinned MCP clients (npm ci)" >&2
  (cd "$clients" && PATH="$bindir:$PATH" npm ci --no-audit --no-fund --loglevel=error >&2)
fi
audits="$root/edge/testdata/pages"
if [ ! -d "$audits/node_modules/axe-core" ] || [ "$audits/package-lock.json" -nt "$audits/node_modules/.package-lock.json" ]; then
  # puppeteer-core drives Debian's Chromium (make deps): it downloads no
  # browser of its own.
  echo "node.sh: installing the pages' browser audits (axe-core, puppeteer-core, lighthouse; npm ci)" >&2
  (cd "$audits" && PATH="$bindir:$PATH" npm ci --no-audit --no-fund --loglevel=error >&2)
fi
runner="$root/analytics/chtest/chdb/node"
if [ ! -f "$runner/node_modules/chdb/package.json" ] || [ "$runner/package-lock.json" -nt "$runner/node_modules/.package-lock.json" ]; then
  # npm install, not npm ci: the lock holds the one platform library npm
  # resolved (chdb's are optional dependencies, one per platform), which
  # npm ci refuses as out of step; npm install takes the lock's versions.
  echo "node.sh: installing the current ClickHouse engine (npm's chdb, as the lock pins it)" >&2
  (cd "$runner" && PATH="$bindir:$PATH" npm install --no-audit --no-fund --loglevel=error >&2)
fi
echo "$bindir"
