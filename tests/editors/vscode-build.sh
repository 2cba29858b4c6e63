#!/usr/bin/env bash
# Builds the VS Code extension's package from the build folder $1 with
# editors/vscode/package-vsix.sh (npm ci against the committed
# package-lock.json, tsc, unit checks, the esbuild bundle, `vsce package
# --target linux-x64` carrying $1's hotline and agents under bin/, checks of
# the result). $1 must be a -DHOTLINE_STATIC_DEPS=ON build (tests/run-all.sh
# passes build-release/); HOTLINE_VSIX_ALLOW_SHARED=1 accepts another for a
# local run. Output: $1/editors/hotline.vsix.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: vscode-build.sh BUILD_DIR}" && pwd)
"$root/editors/vscode/package-vsix.sh" "$build" "$build/editors/hotline.vsix" >/dev/null
echo "vscode-build: $build/editors/hotline.vsix"
