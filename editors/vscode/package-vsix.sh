#!/usr/bin/env bash
# The VS Code extension's platform package, end to end (docs/packaging.md,
# "VS Code: the .vsix"):
#   editors/vscode/package-vsix.sh [BUILD_DIR] [OUT.vsix]
# 1. the server: without BUILD_DIR, a Release build with
#    -DHOTLINE_STATIC_DEPS=ON and no tests in build-vsix/ at the repository
#    root (configured and built here); with BUILD_DIR, that build as it is.
#    Its install tree (`cmake --install --strip`) gives bin/hotline and the
#    agent tree, copied to the extension's bin/hotline and bin/python (the
#    server finds its agents next to itself). The binary must need nothing
#    but libc, libm and the loader (a build without HOTLINE_STATIC_DEPS is
#    refused: it needs the build machine's libuv and jansson;
#    HOTLINE_VSIX_ALLOW_SHARED=1 lets it through for a local test);
# 2. the extension: npm ci (committed package-lock.json), tsc (type check and
#    the unit checks' build), node out/test/unit.js, then vsce package
#    --target linux-x64, whose vscode:prepublish bundles src/ into
#    dist/extension.js with esbuild (one file: no node_modules in the
#    package); the repository's LICENSE is copied in first;
# 3. checks on the result: the files it must carry, none it must not
#    (node_modules, src, maps), and vsce's own warnings are errors.
# Output: OUT (default BUILD_DIR/editors/hotline-linux-x64.vsix).
# The agents are the build's: pyenv's 3.9-3.13 and /usr/bin/python3 where
# the build found them; 3.14 / 3.15 are built only inside the sid tree
# (tests/py-sid.sh) and are not in the package.
set -euo pipefail
ext=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$ext/../.." && pwd)
say() { echo "package-vsix: $*" >&2; }
die() { say "$*"; exit 1; }

if [ -n "${1:-}" ]; then
    build=$(cd "$1" && pwd)
else
    build="$root/build-vsix"
    say "static Release build in $build"
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DHOTLINE_STATIC_DEPS=ON \
          -DHOTLINE_TESTS=OFF >/dev/null
    cmake --build "$build" -j"$(nproc)" >/dev/null
fi
[ -x "$build/hotline" ] || die "$build/hotline is missing (build it first)"
out=${2:-$build/editors/hotline-linux-x64.vsix}
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")

# 1. the server and its agents, from the build's install tree, stripped
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$build" --prefix "$stage" --strip >/dev/null
needed=$(readelf -d "$stage/bin/hotline" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for lib in $needed; do
    case $lib in
    libc.so.* | libm.so.* | ld-linux*) ;;
    *)
        [ -n "${HOTLINE_VSIX_ALLOW_SHARED:-}" ] && { say "warning: bin/hotline needs $lib"; continue; }
        die "bin/hotline needs $lib (NEEDED: $needed): build with -DHOTLINE_STATIC_DEPS=ON" \
            "(or HOTLINE_VSIX_ALLOW_SHARED=1 for a package only this machine can run)" ;;
    esac
done
agents=$(cd "$stage/lib/hotline/python/_hotline_agent" && ls _agent.*.so 2>/dev/null | tr '\n' ' ')
[ -n "$agents" ] || die "the build made no agent"
say "bin/hotline needs: $needed; agents: $agents"
cd "$ext"
rm -rf bin && mkdir bin
cp "$stage/bin/hotline" bin/hotline
cp -r "$stage/lib/hotline/python" bin/python
cp "$root/LICENSE" LICENSE

# 2. the extension
npm ci --no-audit --no-fund --loglevel=error
npx tsc -p .
node out/test/unit.js
log=$(mktemp)
npx vsce package --target linux-x64 --no-dependencies --allow-missing-repository --no-rewrite-relative-links \
    -o "$out" 2>&1 | tee "$log" >&2
# vsce prints its warnings (unbundled files, a missing LICENSE, ...) as " WARNING "
if grep -q "WARNING" "$log"; then
    rm -f "$log"
    die "vsce warned (above)"
fi
rm -f "$log"

# 3. what the package holds
list=$(unzip -l "$out")
for f in extension/dist/extension.js extension/package.json extension/bin/hotline \
         extension/bin/python/sitecustomize.py extension/bin/python/_hotline_agent/__init__.py \
         extension/bin/python/_hotline_agent/libhotline_memshim.so extension/media/executing.svg \
         extension/LICENSE.txt extension/readme.md extension/changelog.md \
         extension/media/screenshot-after-run.png extension/media/screenshot-running.png; do
    grep -q " $f\$" <<<"$list" || die "$f missing from $out"
done
for a in $agents; do
    grep -q " extension/bin/python/_hotline_agent/$a\$" <<<"$list" || die "agent $a missing from $out"
done
if grep -E " extension/(node_modules|src|out)/| \.map\$|\.ts\$" <<<"$list"; then
    die "$out carries sources, maps or node_modules (above)"
fi
say "$out: $(stat -c %s "$out") bytes, $(tail -1 <<<"$list" | awk '{print $2}') files"
echo "$out"
