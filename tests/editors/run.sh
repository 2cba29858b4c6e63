#!/usr/bin/env bash
# Editor tests, called by tests/run-all.sh with the build folder (holding the
# hotline binary) as $1 and the static build the .vsix carries as $2
# (default $1; it must be -DHOTLINE_STATIC_DEPS=ON: vscode-build.sh). Runs
# what is reliable on a fresh CI machine:
#   - Neovim end-to-end (tests/editors/nvim-e2e.sh; installs Debian's neovim)
#   - VS Code extension: npm ci, TypeScript compile, unit checks, esbuild
#     bundle, the linux-x64 .vsix (editors/vscode/package-vsix.sh)
#   - VS Code end-to-end in code-server + headless Chromium (vscode-e2e.sh;
#     the first run installs code-server, Chromium and playwright-core)
# Exits non-zero on the first failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR [VSIX_BUILD_DIR]}" && pwd)
vsix_build=$(cd "${2:-$build}" && pwd)
step() { printf '\n=== editors: %s ===\n' "$*"; }

step "neovim end-to-end"
"$here/nvim-e2e.sh" "$build"

step "vs code extension build"
"$here/vscode-build.sh" "$vsix_build"

step "vs code end-to-end (code-server)"
HOTLINE_REUSE_VSIX=1 "$here/vscode-e2e.sh" "$vsix_build"
echo "editors: all passed"
