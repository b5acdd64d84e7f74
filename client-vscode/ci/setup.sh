#!/usr/bin/env bash
# Installs what the VS Code end-to-end test needs on a clean Debian 12 machine (root, Node 20, npm, and
# no network but the npm registry, PyPI and Debian's apt): Debian's chromium and the native build tools,
# the extension's npm dependencies, and code-server 4.100.3 (VS Code 1.100.3, the newest on Node 20)
# with playwright-core. Idempotent: a second run only checks.
set -euo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)   # client-vscode/
log() { echo "[vscode setup $(date +%T)] $*"; }

missing=()
for exe in chromium rg make g++ pkg-config; do command -v "$exe" >/dev/null 2>&1 || missing+=("$exe"); done
dpkg -s libkrb5-dev >/dev/null 2>&1 || missing+=(libkrb5-dev)   # code-server's kerberos module builds against it
if ((${#missing[@]})); then
  log "apt: chromium ripgrep libkrb5-dev build-essential pkg-config (missing: ${missing[*]})"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends chromium ripgrep libkrb5-dev build-essential pkg-config python3 >/dev/null
fi
node -e 'process.exit(+process.versions.node.split(".")[0] === 20 ? 0 : 1)' \
  || { echo "code-server 4.100.3 needs Node 20, found $(node --version)" >&2; exit 1; }

# npm 11.19 runs a dependency's install scripts only when package.json's allowScripts names it (the
# two packages have it). The nested installs of code-server's postinstall skip their scripts, which is
# fine: code-server's tarball ships lib/vscode's native modules prebuilt for Node 20 on linux-x64.
export npm_config_unsafe_perm=true npm_config_yes=true npm_config_nodedir=/usr npm_config_audit=false npm_config_fund=false

# @vscode/ripgrep downloads its binary from GitHub at install time; offer Debian's rg in the cache it checks.
RG_TMP=$(mktemp -d); trap 'rm -rf "$RG_TMP"' EXIT
mkdir -p "$RG_TMP/vscode-ripgrep-cache-1.15.11"
tar czf "$RG_TMP/vscode-ripgrep-cache-1.15.11/ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz" -C "$(dirname "$(command -v rg)")" rg

stamp_ok() { [ -f "$1/node_modules/.flowedit-stamp" ] && cmp -s "$1/package-lock.json" "$1/node_modules/.flowedit-stamp"; }
install() {  # npm ci in $1 unless its node_modules already matches its lock file
  if stamp_ok "$1"; then log "$1: up to date"; return; fi
  log "npm ci in $1"
  (cd "$1" && TMPDIR="$RG_TMP" npm ci --no-audit --no-fund --loglevel=error)
  cp "$1/package-lock.json" "$1/node_modules/.flowedit-stamp"
}
install "$HERE"
install "$HERE/e2e"
CS="$HERE/e2e/node_modules/.bin/code-server"
[ -x "$HERE/e2e/node_modules/code-server/lib/vscode/node_modules/node-pty/build/Release/pty.node" ] \
  || { echo "code-server's native modules were not built (see the npm output above)" >&2; exit 1; }
log "ready: code-server $(XDG_CONFIG_HOME="$RG_TMP" "$CS" --version | tail -1), $(chromium --version 2>/dev/null | head -1)"
