#!/usr/bin/env bash
# One wheel for every CPython here (docs/packaging.md, "One wheel, every
# agent"): `pip wheel` with HOTLINE_WHEEL_PYTHONS naming the other
# interpreters and wheel.py-api=py3 gives a py3-none wheel that carries an
# agent per minor version; installed (no index) into venvs of the oldest
# and the newest of them, `hotline run` there profiles a script with the
# venv's own interpreter (the agent matching it) and `import hotline`
# works. Needs PyPI for the isolated build (scikit-build-core): NOT RUN
# (exit 77) without it, a failure under CI.
#
# usage: tests/pkg/wheel-all-agents.sh SOURCE_DIR PYTHON [OTHER_PYTHON...]
#   PYTHON builds the wheel; the others' agents go in too.
set -u
src=$(cd "$1" && pwd)
py=$2
shift 2
others=("$@")

fail() {
    printf 'FAIL: %s\n' "$1"
    [ -n "${2:-}" ] && [ -f "$2" ] && tail -n 40 "$2"
    exit 1
}
notrun() {
    if [ -n "${CI:-}" ]; then fail "$1 (under CI this is a failure)"; fi
    printf 'NOT RUN: %s\n' "$1"
    exit 77
}

[ ${#others[@]} -gt 0 ] || notrun "no other interpreter with headers on this machine"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotline-allw-XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

# the tree as it is now, without build output (as pip-install.sh copies it)
mkdir "$tmp/src"
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    (cd "$src" && git ls-files -z --cached --others --exclude-standard |
        xargs -0 cp --parents -t "$tmp/src" 2>/dev/null) || fail "copy of the tree"
else
    cp -r "$src/." "$tmp/src" || fail "copy of the tree"
fi

"$py" -m venv "$tmp/bv" || fail "venv of $py"
list=$(IFS=';'; echo "${others[*]}")
start=$(date +%s)
if ! "$tmp/bv/bin/pip" wheel -q "$tmp/src" -w "$tmp/wheel" \
        --config-settings=cmake.define.HOTLINE_WHEEL_PYTHONS="$list" \
        --config-settings=wheel.py-api=py3 \
        >"$tmp/wheel.log" 2>&1; then
    grep -qiE "could not (find|fetch)|connection|network|resolve" "$tmp/wheel.log" &&
        notrun "pip could not reach the package index"
    fail "pip wheel" "$tmp/wheel.log"
fi
secs=$(($(date +%s) - start))
whl=$(ls "$tmp"/wheel/hotline_profiler-*.whl 2>/dev/null | head -1)
[ -n "$whl" ] || fail "no wheel made" "$tmp/wheel.log"
case "$(basename "$whl")" in
*-py3-none-*) ;;
*) fail "the wheel is not tagged py3-none: $(basename "$whl")" ;;
esac
agents=$(unzip -l "$whl" | grep -o '_hotline_agent/_agent\.cpython-[0-9]*' | sort -u |
    sed 's/.*cpython-//' | tr '\n' ' ')
printf 'wheel %s, %s bytes, built in %s s; agents (site-packages and agent tree): %s\n' \
    "$(basename "$whl")" "$(stat -c %s "$whl")" "$secs" "$agents"

# every interpreter named has its agent, in both trees
want=0
for p in "$py" "${others[@]}"; do
    tag=$("$p" -c 'import sys; print("%d%d" % sys.version_info[:2])') || fail "cannot run $p"
    for where in "_hotline_agent/_agent.cpython-$tag" "lib/hotline/python/_hotline_agent/_agent.cpython-$tag"; do
        unzip -l "$whl" | grep -q "$where" || fail "no agent for $p ($tag) at $where"
    done
    want=$((want + 1))
done

cat >"$tmp/busy.py" <<'PY'
def work():
    s = 0
    for i in range(3_000_000):
        s += i * i  # HOT
    return s
work()
PY
# the oldest and the newest minor named: each venv's hotline runs its own python
for p in $(for q in "$py" "${others[@]}"; do
        printf '%s %s\n' "$("$q" -c 'import sys; print(sys.version_info[1])')" "$q"
    done | sort -n | sed -n '1p;$p' | cut -d' ' -f2); do
    v="$tmp/venv-$(basename "$(dirname "$(dirname "$p")")")-$RANDOM"
    "$p" -m venv "$v" || fail "venv of $p"
    "$v/bin/pip" install -q --no-index --no-deps "$whl" >"$tmp/inst.log" 2>&1 ||
        fail "install into a venv of $p" "$tmp/inst.log"
    out=$(cd "$tmp" && VIRTUAL_ENV="$v" PATH="$v/bin:$PATH" "$v/bin/hotline" run busy.py 2>&1) ||
        fail "hotline run under $p: $out"
    echo "$out" | grep -q "busy.py:4" || fail "the report under $p has no busy.py:4: $out"
    "$v/bin/python" -c 'import hotline, _hotline_agent' || fail "import hotline under $p"
    printf 'ok: %s (%s): hotline run names busy.py:4, import hotline\n' "$p" \
        "$("$v/bin/python" -c 'import platform; print(platform.python_version())')"
done
echo PASS
