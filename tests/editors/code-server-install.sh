#!/usr/bin/env bash
# The VS Code the end-to-end test drives: code-server (VS Code's browser
# build) 4.100.3, Debian's Chromium and playwright-core, into PREFIX
# (default ~/.cache/code-server-e2e), from the package registries alone:
# code-server's install scripts would download prebuilt binaries from the
# internet, so they are skipped and their steps done here (npm modules
# without scripts, ripgrep from Debian, the native modules rebuilt locally).
# Idempotent (PREFIX/.ok); prints PREFIX last. Used by vscode-e2e.sh.
#   tests/editors/code-server-install.sh [PREFIX]
set -euo pipefail
version=4.100.3
prefix=${1:-$HOME/.cache/code-server-e2e}
if [ -f "$prefix/.ok" ]; then
    echo "$prefix"
    exit 0
fi
say() { echo "code-server-install: $*" >&2; }

# Chromium for playwright; the rest builds code-server's native modules
debs=(chromium fonts-noto-color-emoji ripgrep libkrb5-dev libx11-dev libxkbfile-dev
      libsecret-1-dev pkg-config build-essential python3)
missing=()
for d in "${debs[@]}"; do dpkg -s "$d" >/dev/null 2>&1 || missing+=("$d"); done
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    say "apt-get install ${missing[*]}"
    $sudo apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

command -v npm >/dev/null || { say "needs node and npm (.ci/install-deps installs them)"; exit 1; }
npmi() { npm install --no-audit --no-fund --ignore-scripts "$@" >/dev/null; }
mkdir -p "$prefix"
cd "$prefix"
[ -f package.json ] || npm init -y >/dev/null
say "code-server $version and playwright-core"
npmi "code-server@$version" playwright-core
vs="$prefix/node_modules/code-server/lib/vscode"
cd "$vs"
say "VS Code's own modules"
npmi --omit=dev
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
say "native modules, built here"
npm_config_yes=true npm rebuild node-pty native-watchdog kerberos >/dev/null
ln -sfn node_modules node_modules.asar
ln -sf code-linux.sh bin/remote-cli/code-server
ln -sf browser-linux.sh bin/helpers/browser.sh
(cd extensions && npmi --omit=dev)
cd "$prefix"
npm_config_yes=true npm rebuild argon2 --build-from-source >/dev/null
touch "$prefix/.ok"
echo "$prefix"
