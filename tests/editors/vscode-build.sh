#!/usr/bin/env bash
# Builds the VS Code extension from a clean state: npm ci (committed
# package-lock.json), TypeScript compile, unit checks of the pure helpers,
# then the .vsix with the hotline binary and agent directory from the build
# folder $1 bundled under bin/. Output: $1/editors/hotline.vsix.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: vscode-build.sh BUILD_DIR}" && pwd)
ext="$root/editors/vscode"
cd "$ext"
npm ci --no-audit --no-fund --loglevel=error
npx tsc -p .
node out/test/unit.js
rm -rf bin && mkdir -p bin
cp "$build/hotline" bin/hotline
[ -d "$build/python" ] && cp -r "$build/python" bin/python
mkdir -p "$build/editors"
npx vsce package --no-dependencies --allow-missing-repository --skip-license -o "$build/editors/hotline.vsix" >/dev/null
# the package must hold the bundled extension (esbuild: the client library inside) and the binary
list=$(unzip -l "$build/editors/hotline.vsix")
for f in extension/dist/extension.js extension/bin/hotline extension/media/executing.svg; do
  grep -q " $f\$" <<<"$list" || { echo "vscode-build: $f missing from the .vsix" >&2; exit 1; }
done
echo "vscode-build: $build/editors/hotline.vsix"
