#!/usr/bin/env bash
# VS Code end-to-end test (code-server + headless Chromium), by hand:
#   tests/editors/vscode-e2e.sh BUILD_DIR
# Installs code-server/Chromium/playwright-core once (code-server-install.sh, here),
# builds the .vsix (vscode-build.sh), runs vscode_e2e.js; screenshots and
# code-server logs in BUILD_DIR/editors/vscode-e2e/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: vscode-e2e.sh BUILD_DIR}" && pwd)
prefix=$("$here/code-server-install.sh" | tail -1)
[ -n "${HOTLINE_REUSE_VSIX:-}" ] && [ -f "$build/editors/hotline.vsix" ] || "$here/vscode-build.sh" "$build"
out="$build/editors/vscode-e2e"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$here/project" "$work/project"
timeout 300 node "$here/vscode_e2e.js" "$prefix" "$build/editors/hotline.vsix" "$work/project" "$out"
