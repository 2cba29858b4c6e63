#!/usr/bin/env bash
# `pip install` gives a working Hotline (docs/packaging.md): a copy of the
# working tree (tracked and untracked-but-not-ignored files, so no build
# folder leaks in) is installed with pip, build isolation on, into a fresh
# venv of PYTHON; then, with PYTHONPATH unset and from another directory:
#   - `hotline --version` prints the distribution's version;
#   - `hotline run examples/demo.py` (the venv activated: VIRTUAL_ENV set)
#     exits 0 with a per-line report of demo.py and its memory table, the
#     memory shim preloaded from the installed agent tree;
#   - `import hotline, _hotline_agent` works;
#   - `python -m hotline tiny.py` writes hotline-<pid>.jsonl, whose
#     `hotline view` report names the script's hot line.
# pip needs PyPI (scikit-build-core for the isolated build). When PyPI
# cannot be reached this prints NOT RUN and exits 77 (ctest: skipped),
# except under CI (CI set), where it fails.
#
# usage: tests/pkg/pip-install.sh [SOURCE_DIR [PYTHON]]
#   SOURCE_DIR: the repository (default: this script's ../..)
#   PYTHON:     the interpreter of the venv (default /usr/bin/python3);
#               needs its headers (python3-dev) and the venv module
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "${1:-$here/../..}" && pwd)
py=${2:-/usr/bin/python3}

fail() {
    printf 'FAIL: %s\n' "$1"
    shift
    for f in "$@"; do
        [ -f "$f" ] && { printf -- '--- %s (tail)\n' "$f"; tail -n 40 "$f"; }
    done
    exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotline-pip-XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# the tree as it is now, uncommitted edits included, without build output
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

"$py" -m venv "$tmp/venv" >"$tmp/venv.log" 2>&1 || fail "$py -m venv" "$tmp/venv.log"
venv=$tmp/venv

# PyPI reachable? (the isolated build needs scikit-build-core from it)
if ! "$venv/bin/pip" download --no-deps --timeout 20 --retries 1 -d "$tmp/probe" \
    'scikit-build-core>=0.11' >"$tmp/probe.log" 2>&1; then
    if [ -n "${CI:-}" ]; then
        fail "pip cannot get scikit-build-core from PyPI or the configured index (CI is set: this test must run)" "$tmp/probe.log"
    fi
    printf '\n!!! pkg.pip_install NOT RUN: pip cannot get scikit-build-core from PyPI or the configured index\n\n'
    tail -n 5 "$tmp/probe.log"
    exit 77
fi

t0=$(date +%s)
if ! "$venv/bin/pip" install --no-cache-dir "$tmp/src" >"$tmp/pip.log" 2>&1; then
    fail "pip install of the working tree" "$tmp/pip.log"
fi
echo "pip install: $(($(date +%s) - t0)) s"

# a user's shell: nothing points at the source or a build
unset PYTHONPATH HOTLINE_AGENT_PATH PYTHONHOME
mkdir "$tmp/work"
cd "$tmp/work" || fail "cd"

hl=$venv/bin/hotline
[ -x "$hl" ] || fail "no executable $hl"
head -c 4 "$hl" | grep -q 'ELF' || fail "$hl is not the binary itself"

ver=$("$venv/bin/python" -c \
    'import importlib.metadata as m; print(m.version("hotline-profiler"))') ||
    fail "importlib.metadata.version(\"hotline-profiler\")"
got=$("$hl" --version) || fail "hotline --version exited $?"
[ "$got" = "hotline $ver" ] || fail "hotline --version: '$got', package version $ver"
echo "version: $got"

# what the installed binary needs: libc's family only (libuv and jansson
# linked in, libcurl loaded on first use of "Optimize this")
needed=$(readelf -d "$hl" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
[ -n "$needed" ] || fail "readelf -d $hl: no NEEDED entries"
case " $needed" in
*libuv* | *jansson* | *curl*) fail "the installed hotline links: $needed" ;;
esac
echo "NEEDED: $needed"

# the venv activated, as a user would: hotline runs the venv's python
run_env=(env VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH")

"${run_env[@]}" hotline run "$src/examples/demo.py" >"$tmp/demo.out" 2>"$tmp/demo.err" ||
    fail "hotline run examples/demo.py exited $?" "$tmp/demo.err"
grep -Eq 'demo\.py:[0-9]+ ' "$tmp/demo.err" || fail "no line of demo.py in the report" "$tmp/demo.err"
grep -q 'alloc MB' "$tmp/demo.err" || fail "no memory table in the report" "$tmp/demo.err"
echo "hotline run examples/demo.py: report with $(grep -Ec 'demo\.py:[0-9]+ ' "$tmp/demo.err") lines of demo.py"

# the shim: preloaded from the installed agent tree, and the agent uses it
cat >"$tmp/work/shim.py" <<'EOF'
import os
import _hotline_agent._agent as a
print("preload=" + os.environ.get("LD_PRELOAD", ""))
print("mode=" + str((a.stats() or {}).get("mem_mode")))
EOF
"${run_env[@]}" hotline run shim.py >"$tmp/shim.out" 2>"$tmp/shim.err" ||
    fail "hotline run shim.py exited $?" "$tmp/shim.err"
grep -q "^preload=$venv/lib/hotline/python/_hotline_agent/libhotline_memshim.so" "$tmp/shim.out" ||
    fail "the memory shim was not preloaded from $venv/lib/hotline/python" "$tmp/shim.out"
grep -q '^mode=windows$' "$tmp/shim.out" || fail "memory mode is not 'windows' (shim)" "$tmp/shim.out"
echo "memory shim: $(grep '^mode=' "$tmp/shim.out")"

"$venv/bin/python" -c 'import hotline, _hotline_agent, sys
assert callable(hotline.load_ipython_extension)
print(hotline.__file__)' >"$tmp/import.out" 2>&1 ||
    fail "import hotline, _hotline_agent" "$tmp/import.out"
case $(cat "$tmp/import.out") in
"$venv"/lib/python3*/site-packages/hotline/__init__.py) ;;
*) fail "hotline imported from outside the venv's site-packages" "$tmp/import.out" ;;
esac

# the JupyterLab extension (editors/jupyterlab, prebuilt): where JupyterLab
# looks in this environment (sys.prefix/share/jupyter/labextensions)
labext="$venv/share/jupyter/labextensions/hotline-profiler"
[ -f "$labext/package.json" ] && ls "$labext"/static/remoteEntry.*.js >/dev/null 2>&1 ||
    fail "no JupyterLab extension in $labext"
echo "JupyterLab extension: $labext"

cat >"$tmp/work/tiny.py" <<'EOF'
def spin():
    s = 0
    for i in range(3000000):
        s += i * i  # HOT
    return s
spin()
EOF
"$venv/bin/python" -m hotline tiny.py >"$tmp/m.out" 2>&1 ||
    fail "python -m hotline tiny.py exited $?" "$tmp/m.out"
jsonl=$(ls hotline-*.jsonl 2>/dev/null | head -n 1)
[ -n "$jsonl" ] || fail "python -m hotline wrote no hotline-<pid>.jsonl" "$tmp/m.out"
"$hl" view "$jsonl" >"$tmp/view.out" 2>&1 || fail "hotline view $jsonl exited $?" "$tmp/view.out"
grep -q 'tiny\.py:4 ' "$tmp/view.out" || fail "no tiny.py:4 in the report" "$tmp/view.out"
echo "python -m hotline tiny.py: $(grep -m1 'tiny\.py:4 ' "$tmp/view.out" | sed 's/  */ /g')"

# pytest --hotline through the package's pytest11 entry point (no -p), with
# PyPI's pytest (pinned) in the same venv
"$venv/bin/pip" install --no-cache-dir 'pytest==8.3.4' >"$tmp/pytest-pip.log" 2>&1 ||
    fail "pip install pytest==8.3.4" "$tmp/pytest-pip.log"
mkdir -p "$tmp/proj/tests"
cat >"$tmp/proj/tests/test_t.py" <<'EOF'
def spin():
    s = 0
    for i in range(2000000):
        s += i * i  # HOT
    return s


def test_spin():
    assert spin() > 0
EOF
(cd "$tmp/proj" && "$venv/bin/pytest" -q -p no:cacheprovider --hotline) >"$tmp/pytest.out" 2>&1 ||
    fail "pytest --hotline exited $?" "$tmp/pytest.out"
grep -q 'tests/test_t.py:4  s += i \* i  # HOT' "$tmp/pytest.out" ||
    fail "pytest --hotline: no hot line of test_spin in the summary" "$tmp/pytest.out"
ls "$tmp/proj/.hotline/tests/"tests_test_t.py_test_spin-*.jsonl >/dev/null 2>&1 ||
    fail "pytest --hotline: no profile of test_spin" "$tmp/pytest.out"
echo "pytest --hotline: $(grep -m1 'test_t.py:4' "$tmp/pytest.out" | sed 's/  */ /g')"

echo "PASS"
