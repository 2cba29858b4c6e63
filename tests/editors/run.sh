#!/usr/bin/env bash
# Editor tests, called by tests/run-all.sh with the build folder (holding the
# hotline binary) as $1. Runs what is reliable on a fresh CI machine:
#   - Neovim end-to-end (tests/editors/nvim-e2e.sh; installs Debian's neovim)
#   - VS Code extension: npm ci, TypeScript compile, unit checks, .vsix package
# The code-server (real VS Code in Chromium) end-to-end test is separate:
# tests/editors/vscode-e2e.sh BUILD_DIR (see docs/editors.md for its state).
# Exits non-zero on the first failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
step() { printf '\n=== editors: %s ===\n' "$*"; }

step "neovim end-to-end"
"$here/nvim-e2e.sh" "$build"

if [ -x "$here/vscode-build.sh" ]; then
  step "vs code extension build"
  "$here/vscode-build.sh" "$build"
fi
echo "editors: all passed"
