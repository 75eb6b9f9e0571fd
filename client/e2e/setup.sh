#!/usr/bin/env bash
# Installs what the VS Code end-to-end test (vscode.test.mjs) needs, offline except for the
# npm registry and Debian apt, into client/e2e/.cache/:
#   - code-server 4.100.3 (VS Code 1.100.3 in a browser) and puppeteer-core, exactly as
#     pinned in package-lock.json, kept apart from the extension's own dependencies;
#   - code-server's VS Code dependencies (lib/vscode, pinned by its npm-shrinkwrap.json),
#     with the native modules compiled here instead of by install scripts that download;
#   - the Debian packages it needs (chromium, ripgrep, the headers the native modules
#     compile against), with apt-get only when one is missing.
# A stamp (.cache/.installed) records the inputs; a second run with the same inputs only
# checks that the install is still there and returns at once.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="$HERE/.cache"
STAMP="$CACHE/.installed"
CS="$CACHE/node_modules/code-server"
VSCODE="$CS/lib/vscode"

log() { echo "vscode-e2e setup: $*"; }
die() { echo "vscode-e2e setup: ERROR: $*" >&2; exit 1; }

# What the stamp depends on: the pins, this script, and the node major version (native
# modules are compiled for it).
inputs_hash() {
  { cat "$HERE/package.json" "$HERE/package-lock.json" "$0"; node --version | cut -d. -f1; } \
    | sha256sum | cut -d' ' -f1
}

installed_ok() {
  [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(inputs_hash)" ] \
    && [ -x "$CS/out/node/entry.js" ] && [ -d "$CACHE/node_modules/puppeteer-core" ] \
    && [ -e "$VSCODE/node_modules.asar" ] && [ -x "$VSCODE/node_modules/@vscode/ripgrep/bin/rg" ] \
    && [ -x /usr/bin/chromium ]
}

# --- Debian packages ---------------------------------------------------------------------
# chromium: the browser the test drives; ripgrep: VS Code's search binary (the npm package
# would download it); the rest: headers and compilers for code-server's native modules
# (kerberos, @vscode/spdlog, native-watchdog, @parcel/watcher, @vscode/deviceid, node-pty,
# argon2); fonts so that screenshots show text.
APT_PACKAGES=(chromium ripgrep libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev
  g++ make python3 pkg-config fonts-dejavu-core fonts-liberation)

apt_missing() {
  local p missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  echo "${missing[@]:-}"
}

ensure_apt() {
  local missing
  missing="$(apt_missing)"
  [ -z "$missing" ] && return 0
  command -v apt-get >/dev/null 2>&1 || die "missing Debian packages ($missing) and no apt-get to install them"
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  log "installing Debian packages: $missing"
  $sudo apt-get update -qq || die "apt-get update failed"
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null \
    || die "apt-get install $missing failed"
}

# --- fast path ---------------------------------------------------------------------------
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || die "node and npm are needed (make node installs them)"
[ "$(node --version | cut -d. -f1)" = "v20" ] || die "code-server 4.100.3 needs Node 20; this is node $(node --version)"

if installed_ok && [ -z "$(apt_missing)" ]; then
  log "up to date ($CACHE)"
  exit 0
fi

start=$(date +%s)
ensure_apt

# --- npm: code-server and puppeteer-core ------------------------------------------------
# --ignore-scripts: code-server's postinstall runs `npm install` in lib/vscode with every
# install script, and some of those download binaries (ripgrep) from GitHub. The steps it
# would do are done below, one by one, offline.
rm -rf "$CACHE"
mkdir -p "$CACHE"
cp "$HERE/package.json" "$HERE/package-lock.json" "$CACHE/"
log "npm ci (code-server 4.100.3, puppeteer-core)"
(cd "$CACHE" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) \
  || die "npm ci in $CACHE failed"
# argon2 (code-server's password hashing): its install script tries a prebuilt binary
# from GitHub and falls back to compiling.
log "npm rebuild argon2"
(cd "$CACHE" && npm rebuild argon2 --loglevel=error >/dev/null) || die "building argon2 failed"

# --- code-server's VS Code (what its postinstall.sh does) --------------------------------
log "npm install in code-server/lib/vscode (pinned by its npm-shrinkwrap.json)"
(cd "$VSCODE" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error) \
  || die "npm install in $VSCODE failed"
log "compiling VS Code's native modules"
# npm_config_yes: node-pty's postinstall runs `npx node-gyp` (to write a
# compile_commands.json), which would otherwise stop at npx's "ok to proceed?" prompt.
(cd "$VSCODE" && npm_config_yes=true npm rebuild kerberos @vscode/spdlog native-watchdog @parcel/watcher \
  @vscode/deviceid node-pty --loglevel=error >/dev/null) \
  || die "compiling VS Code's native modules failed (the Debian packages ${APT_PACKAGES[*]} are needed)"
log "npm install in code-server/lib/vscode/extensions"
(cd "$VSCODE/extensions" && npm install --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error) \
  || die "npm install in $VSCODE/extensions failed"
# @vscode/ripgrep's install script downloads rg; use Debian's.
mkdir -p "$VSCODE/node_modules/@vscode/ripgrep/bin"
cp "$(command -v rg)" "$VSCODE/node_modules/@vscode/ripgrep/bin/rg"
# The rest of code-server's postinstall.sh.
ln -sfn node_modules "$VSCODE/node_modules.asar"
ln -sfn code-linux.sh "$VSCODE/bin/remote-cli/code-server"
ln -sfn browser-linux.sh "$VSCODE/bin/helpers/browser.sh"

# --- check it runs -----------------------------------------------------------------------
"$CS/out/node/entry.js" --version >/dev/null 2>&1 || die "code-server does not run: $CS/out/node/entry.js --version"
for m in kerberos @vscode/spdlog native-watchdog @parcel/watcher @vscode/deviceid node-pty; do
  (cd "$VSCODE" && node -e "require('$m')" 2>/dev/null) || die "native module $m does not load"
done

inputs_hash >"$STAMP"
log "installed in $(( $(date +%s) - start ))s ($CACHE)"
