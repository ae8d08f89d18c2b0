#!/usr/bin/env bash
# Makes Node.js 20 or newer available for the MCP client tests and
# installs the pinned clients (mcp/testdata/clients/package-lock.json) and
# the pages' browser audits (edge/testdata/pages/package-lock.json), and
# the current ClickHouse engine the SQL tests replay statements on (npm's
# chdb: analytics/chtest/chdb/node/package-lock.json), and the OpenAPI
# consumers' tools the description is linted and replayed with
# (edge/testdata/openapi/package-lock.json), and the lake's readers
# (edge/testdata/lake/package-lock.json).
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
# install DIR WHAT NPM-ARGS...: DIR's locked packages, installed once per
# lock (and Node.js version) into the user's cache and linked as
# DIR/node_modules, so a fresh clone (CI's, or a second worktree) takes
# them in a moment instead of a fresh npm install each.
install() {
  local dir=$1 what=$2 sum cache tmp
  shift 2
  sum=$(cat "$dir/package.json" "$dir/package-lock.json" <(PATH="$bindir:$PATH" node --version) | sha256sum | cut -c1-16)
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/edge/node_modules/$(basename "$dir")-$sum"
  if [ ! -d "$cache/node_modules" ]; then
    echo "node.sh: installing $what" >&2
    mkdir -p "$(dirname "$cache")"
    tmp=$(mktemp -d "$cache.XXXXXX")
    cp "$dir/package.json" "$dir/package-lock.json" "$tmp/"
    (cd "$tmp" && PATH="$bindir:$PATH" npm "$@" --no-audit --no-fund --loglevel=error >&2)
    # Another install of the same lock may have finished first.
    mv -T "$tmp" "$cache" 2>/dev/null || rm -rf "$tmp"
  fi
  if [ "$(readlink "$dir/node_modules" 2>/dev/null)" != "$cache/node_modules" ]; then
    rm -rf "$dir/node_modules"
    ln -s "$cache/node_modules" "$dir/node_modules"
  fi
}
install "$root/mcp/testdata/clients" "the pinned MCP clients (npm ci)" ci
# puppeteer-core drives Debian's Chromium (make deps): it downloads no
# browser of its own.
install "$root/edge/testdata/pages" "the pages' browser audits (axe-core, puppeteer-core, lighthouse; npm ci)" ci
# The OpenAPI consumers' tools (Spectral, Redocly, Dredd) that lint the
# served description and replay its examples against a test edge.
install "$root/edge/testdata/openapi" "the OpenAPI tools (spectral-cli, redocly cli, dredd; npm ci)" ci
# The lake's readers (DuckDB, and hyparquet, a browser's reader) that read
# the Parquet exports in the tests. npm install, as for chdb below: the
# lock holds the one platform build of DuckDB npm resolved.
install "$root/edge/testdata/lake" "the lake's readers (@duckdb/node-api, hyparquet; npm install)" install
# npm install, not npm ci: the lock holds the one platform library npm
# resolved (chdb's are optional dependencies, one per platform), which
# npm ci refuses as out of step; npm install takes the lock's versions.
install "$root/analytics/chtest/chdb/node" "the current ClickHouse engine (npm's chdb, as the lock pins it)" install
echo "$bindir"
