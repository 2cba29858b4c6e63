#!/usr/bin/env bash
# The agent on the newest CPythons (3.14, 3.15), which no Debian stable ships:
# builds a Debian unstable (sid) root file system with python3.X and
# python3.X-dev (mmdebstrap, from the mirror this machine's apt uses), wraps
# each interpreter so that it runs from the host with the tree's own loader
# and libraries, builds the agent against the tree's headers (build-sid/) and
# runs every test that spawns a real interpreter: profiler.*, memory.*,
# run_real_*, attach.* and attach_children.* (hotline attach reads them
# through the tree's loader), attach_one_python.* (the same from a binary
# built with /usr/bin/python3 alone), attach_layouts (the committed layout
# rows against the tree's headers), attach_memory.* (--memory through PEP
# 768) and the lsp.run_* transcripts (the server picks the interpreter from
# $VIRTUAL_ENV, so each version runs them once).
#
#   bash tests/py-sid.sh            # all of it (the tree is kept and reused)
#   HOTLINE_SID_PYTHONS=3.14 ...    # only some versions
#   HOTLINE_SID_DIR=DIR ...         # where the tree lives (default .py-sid/)
#   HOTLINE_SID_TESTS=REGEX ...     # only these ctests (e.g. '^profiler\.truth')
#   rm -rf .py-sid                  # fetch newer packages next time
#
# If the tree cannot be built (no network, no mmdebstrap) it says so loudly
# and exits 0, except under CI (CI set), where that is a failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${HOTLINE_SID_DIR:-$root/.py-sid}
build=${HOTLINE_SID_BUILD:-$root/build-sid}
versions=${HOTLINE_SID_PYTHONS:-3.14 3.15}
jobs=$(nproc)

skip() {
    printf '\n%s\n!!! Python %s tests NOT RUN: %s\n%s\n\n' \
        '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!' "$versions" "$*" \
        '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!' >&2
    [ -z "${CI:-}" ] || exit 1
    exit 0
}

# The Debian archive apt uses here (never a fixed host: mirrors differ per
# machine): first non-security URI of a deb822 .sources or one-line .list.
apt_mirror() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] && awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f"
    done
}

tree=$dir/root
if [ ! -e "$tree/.hotline-complete" ]; then
    mirror=$(apt_mirror | grep -v -- '-security' | head -n 1 || true)
    [ -n "$mirror" ] || skip "no Debian mirror in /etc/apt"
    if ! command -v mmdebstrap >/dev/null; then
        [ "$(id -u)" = 0 ] && apt-get install -y -q mmdebstrap >/dev/null 2>&1 || skip "cannot install mmdebstrap"
    fi
    pkgs=""
    for v in $versions; do pkgs="$pkgs,python$v,python$v-dev"; done
    rm -rf "$tree.tmp"
    mkdir -p "$dir"
    echo "py-sid: building a Debian sid tree with ${pkgs#,} in $tree"
    mmdebstrap --quiet --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
        --include="${pkgs#,}" sid "$tree.tmp" "$mirror" || { rm -rf "$tree.tmp"; skip "mmdebstrap failed (network?)"; }
    rm -rf "$tree" # a half-built one from an interrupted run
    mv "$tree.tmp" "$tree"
    touch "$tree/.hotline-complete"
    echo "py-sid: tree built in ${SECONDS}s"
fi

# One venv-like folder per version: bin/python runs the tree's interpreter
# through the tree's ld.so (the host's is older than the tree's libc);
# --argv0 makes sys.executable this wrapper, so the program's own children
# (subprocess, multiprocessing) run the same way, and pyvenv.cfg points the
# interpreter at the tree's standard library. Host programs it starts (sh)
# see nothing of it: no LD_LIBRARY_PATH. --library-path overrides
# LD_LIBRARY_PATH for the tree's loader, so the caller's comes after the
# tree's own, as a real interpreter would honour it (hotline run puts the
# memory shim's folder there when its path has a space: docs/cli.md).
ldso=$tree/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
[ -x "$ldso" ] || skip "no x86_64 loader in $tree (only x86_64 is supported)"
pythons=""
for v in $versions; do
    [ -x "$tree/usr/bin/python$v" ] || skip "python$v missing from $tree (rm -rf $dir and retry)"
    venv=$dir/py$v
    mkdir -p "$venv/bin"
    printf 'home = %s/usr/bin\ninclude-system-site-packages = false\nversion = %s\n' "$tree" "$v" >"$venv/pyvenv.cfg"
    cat >"$venv/bin/python" <<EOF
#!/bin/sh
exec "$ldso" --library-path "$tree/usr/lib/x86_64-linux-gnu\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" --argv0 "\$0" "$tree/usr/bin/python$v" "\$@"
EOF
    chmod +x "$venv/bin/python"
    "$venv/bin/python" -c 'import sys; print("py-sid:", sys.executable, sys.version.split()[0])'
    pythons="$pythons;$venv/bin/python"
done

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOTLINE_WERROR=ON "-DHOTLINE_PYTHONS=${pythons#;}" >/dev/null
cmake --build "$build" -j"$jobs" --target hotline hotline_agents hotline_spin_all hotline_memtest
for v in $versions; do
    ls "$build"/python/_hotline_agent/_agent.cpython-"${v/./}"-*.so >/dev/null ||
        { echo "py-sid: no agent was built for $v" >&2; exit 1; }
done

filter=${HOTLINE_SID_TESTS:-}
sel='^profiler\.|^memory\.[a-z_]+\.py|^run_real_|^attach(_children)?\.py|^attach_memory(_connect)?\.py'
# attach_layouts: the committed rows against 3.14/3.15's headers in the
# tree; attach_one_python.*: a binary built with /usr/bin/python3 alone
# (the host's) attaches to 3.14/3.15 (tests/attach/CMakeLists.txt)
sel="$sel|^attach_layouts\$|^attach_one_python"
[ -z "$filter" ] || sel=$filter
echo "py-sid: tree and build ready after ${SECONDS}s"
# every part runs even when an earlier one failed; the status says if any did
failed=""
# (lsp.run_* only below, where $VIRTUAL_ENV picks the interpreter)
ctest --test-dir "$build" --output-on-failure -j"$jobs" -R "$sel" -E '^lsp\.run_' || failed="$failed ctest"
if [ -z "$filter" ] || [[ lsp.run_ =~ $filter ]]; then
    for v in $versions; do
        echo "py-sid: lsp.run_* with Python $v"
        VIRTUAL_ENV=$dir/py$v ctest --test-dir "$build" --output-on-failure -j"$jobs" -R '^lsp\.run_' ||
            failed="$failed lsp-$v"
    done
fi
echo "py-sid: done in ${SECONDS}s${failed:+, FAILED:$failed}"
[ -z "$failed" ]
