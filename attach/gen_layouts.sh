#!/usr/bin/env bash
# The per-version rows `hotline attach` reads a CPython with
# (attach/layouts/3.X.inc, one file per minor version, committed): each is
# what attach/gen_layout.c prints when compiled against that version's
# headers and run. The build only includes the committed files, so every
# binary reads every version listed here whatever interpreters its build
# machine has (docs/attach.md, "Layout").
#
#   bash attach/gen_layouts.sh            # write attach/layouts/3.X.inc
#   bash attach/gen_layouts.sh --fetch    # the same, fetching 3.14/3.15's headers
#   bash attach/gen_layouts.sh --check [PYTHON|INCLUDE_DIR ...]
#                                         # regenerate from every header set
#                                         # found and diff with the committed
#                                         # rows (ctest attach_layouts)
#
# Headers are looked for (first found wins when writing; --check checks them
# all): the arguments (an interpreter: its sysconfig include folder; or a
# python3.X include folder), pyenv's $(pyenv root)/versions/3.X.Y, a Debian
# sid tree from tests/py-sid.sh (${HOTLINE_SID_DIR:-.py-sid}/root), the
# headers --fetch extracted (${HOTLINE_LAYOUT_CACHE:-~/.cache/hotline-layouts}),
# /usr/include. --fetch downloads libpython3.X-dev of the versions still
# missing from Debian unstable (the mirror this machine's apt uses; apt-get
# download + dpkg-deb -x, no root file system, no root needed), as
# tests/py-sid.sh's tree has them. Only default builds are taken: headers
# of a free-threaded (Py_GIL_DISABLED) or debug (Py_DEBUG) build describe
# other layouts and are skipped, said so.
#
# Exit: 0; 1 when --check found a difference, or checked nothing.
# Env: CC (default cc), HOTLINE_LAYOUT_VERSIONS (default 3.9 ... 3.15).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=$here/layouts
versions=${HOTLINE_LAYOUT_VERSIONS:-3.9 3.10 3.11 3.12 3.13 3.14 3.15}
cc=${CC:-cc}
mode=write
fetch=0
args=()
for a in "$@"; do
    case $a in
    --check) mode=check ;;
    --fetch) fetch=1 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0 ;;
    -*) echo "gen_layouts: unknown option $a" >&2; exit 2 ;;
    *) args+=("$a") ;;
    esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hotline-layouts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cache=${HOTLINE_LAYOUT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hotline-layouts}
sid=${HOTLINE_SID_DIR:-$root/.py-sid}/root
multiarch=$("$cc" -print-multiarch 2>/dev/null || true)
[ -n "$multiarch" ] || multiarch=x86_64-linux-gnu

# The header sets, one line each: "INCLUDE_DIR<TAB>WHERE" (WHERE says in the
# rows' comment where they came from, with no path of this machine).
sets=$tmp/sets
: >"$sets"
add() { [ -f "$1/Python.h" ] && printf '%s\t%s\n' "$(cd "$1" && pwd -P)" "$2" >>"$sets" || true; }
for a in ${args[@]+"${args[@]}"}; do
    if [ -d "$a" ]; then
        add "$a" "$a"
    elif [ -x "$a" ]; then
        inc=$("$a" -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null) || continue
        add "$inc" "the headers of $a"
    fi
done
pyenv_root=${PYENV_ROOT:-$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")}
for v in $versions; do
    for d in $(ls -d "$pyenv_root"/versions/"$v".* 2>/dev/null | sort -V -r); do
        [[ $(basename "$d") =~ ^$v\.[0-9]+$ ]] && add "$d/include/python$v" "pyenv $(basename "$d")"
    done
    add "$sid/usr/include/python$v" "Debian unstable libpython$v-dev (tests/py-sid.sh's tree)"
    add "$cache/usr/include/python$v" "Debian unstable libpython$v-dev"
    add "/usr/include/python$v" "this machine's /usr/include/python$v"
done

have() { awk -F'\t' '{ print $1 }' "$sets" | grep -q "/python$1\$"; }
if [ "$fetch" = 1 ]; then
    missing=""
    for v in $versions; do have "$v" || missing="$missing libpython$v-dev"; done
    if [ -n "$missing" ]; then
        # the first non-security Debian URI apt uses (as tests/py-sid.sh)
        mirror=$( (awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' /etc/apt/sources.list.d/*.sources
            awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' \
                /etc/apt/sources.list /etc/apt/sources.list.d/*.list) 2>/dev/null | grep -v -- -security | head -n 1 || true)
        [ -n "$mirror" ] || { echo "gen_layouts: no Debian mirror in /etc/apt" >&2; exit 1; }
        apt=$tmp/apt
        mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
        echo "deb $mirror sid main" >"$apt/sources.list"
        # sid's Release file carries a Valid-Until that may have passed
        o=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
            -o Acquire::Check-Valid-Until=false -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
        echo "gen_layouts: fetching$missing from $mirror sid"
        apt-get "${o[@]}" -q update >/dev/null
        (cd "$apt/debs" && apt-get "${o[@]}" -q download $missing >/dev/null)
        mkdir -p "$cache"
        for deb in "$apt"/debs/*.deb; do
            dpkg-deb -x "$deb" "$cache"
            dpkg-deb -W --showformat='${Package} ${Version}\n' "$deb" >>"$cache/versions.txt"
        done
        for v in $versions; do add "$cache/usr/include/python$v" "Debian unstable libpython$v-dev"; done
    fi
fi

# gen_layout.c against one header set: its output in $2, or a reason on
# stdout and status 1. Debian's python3.X/pyconfig.h includes
# <MULTIARCH/python3.X/pyconfig.h> from the parent folder, which in a root
# file system also holds that system's libc headers: only that one folder
# is linked into a private include folder.
generate() {
    local inc=$1 dest=$2 v flags=(-I "$1") priv
    v=$(sed -n 's/^#define PY_VERSION[[:space:]]*"\(.*\)"/\1/p' "$inc/patchlevel.h")
    if [ -d "$inc/../$multiarch/$(basename "$inc")" ]; then
        priv=$tmp/inc$RANDOM
        mkdir -p "$priv/$multiarch"
        ln -s "$(cd "$inc/../$multiarch/$(basename "$inc")" && pwd -P)" "$priv/$multiarch/"
        flags+=(-I "$priv")
    fi
    # the build's configuration: what pyconfig.h defines (compiled, so that
    # Debian's multiarch switch is followed)
    local probe=$tmp/probe.c
    printf '#include <pyconfig.h>\n#ifdef Py_GIL_DISABLED\nfree-threaded\n#endif\n#ifdef Py_DEBUG\ndebug\n#endif\n' >"$probe"
    local kind
    kind=$("$cc" -E -P "${flags[@]}" "$probe" 2>/dev/null | grep -E '^(free-threaded|debug)$' | paste -sd' ') ||
        true
    if [ -n "$kind" ]; then
        echo "$v: a $kind build (these rows are for default builds)"
        return 1
    fi
    if ! "$cc" -O0 -w "${flags[@]}" -o "$tmp/gen" "$here/gen_layout.c" 2>"$tmp/cc.err"; then
        echo "$v: gen_layout.c does not compile against these headers:"
        sed 's/^/    /' "$tmp/cc.err" | head -n 20
        return 1
    fi
    "$tmp/gen" >"$dest"
    echo "$v"
}

rows() { sed -n '/^{$/,$p' "$1"; }
status=0
checked=""
for v in $versions; do
    incs=$(awk -F'\t' -v s="/python$v" 'substr($1, length($1) - length(s) + 1) == s' "$sets" | awk -F'\t' '!seen[$1]++')
    if [ -z "$incs" ]; then
        echo "gen_layouts: $v: not checked, no headers here (bash attach/gen_layouts.sh --fetch gets 3.14+)"
        continue
    fi
    while IFS=$'\t' read -r inc where; do
        if ! micro=$(generate "$inc" "$tmp/rows"); then
            echo "gen_layouts: $v ($where): skipped: $micro"
            continue
        fi
        if [ "$mode" = check ]; then
            if [ ! -f "$out/$v.inc" ]; then
                echo "gen_layouts: $v: FAIL: attach/layouts/$v.inc missing (headers of $micro found)"
                status=1
            elif diff -u --label "attach/layouts/$v.inc" --label "from $micro ($where)" \
                <(rows "$out/$v.inc") "$tmp/rows" >"$tmp/diff"; then
                echo "gen_layouts: $v: ok, the committed rows are what $micro's headers give ($where)"
                checked="$checked $micro"
            else
                echo "gen_layouts: $v: FAIL: $micro's headers ($where) give other rows:"
                cat "$tmp/diff"
                status=1
            fi
            continue
        fi
        extra=""
        [[ $where == Debian* ]] && [ -f "$cache/versions.txt" ] &&
            extra=$(grep "^libpython$v-dev " "$cache/versions.txt" | tail -n 1 | cut -d' ' -f2) || true
        [[ $where == Debian*tree* ]] && [ -f "$sid/var/lib/dpkg/status" ] &&
            extra=$(awk -v p="libpython$v-dev" '$1 == "Package:" { on = $2 == p } on && $1 == "Version:" { print $2 }' \
                "$sid/var/lib/dpkg/status") || true
        {
            echo "/* attach/layouts/$v.inc: the struct attach_layout row (attach/layout.h) of"
            echo " * CPython $v, default build (with the GIL, no Py_DEBUG: free-threaded and"
            echo " * debug builds lay their structures out otherwise; attach does not read"
            echo " * them). Generated by attach/gen_layouts.sh: attach/gen_layout.c compiled"
            echo " * against the headers of Python $micro (from ${where}${extra:+ $extra})"
            echo " * and run. Do not edit: regenerate with \`bash attach/gen_layouts.sh\`;"
            echo " * ctest attach_layouts checks that regenerating changes nothing. */"
            cat "$tmp/rows"
        } >"$out/$v.inc.tmp"
        mv "$out/$v.inc.tmp" "$out/$v.inc"
        echo "gen_layouts: $v: wrote attach/layouts/$v.inc from $micro ($where)"
        checked="$checked $micro"
        break
    done <<<"$incs"
done
if [ "$mode" = check ]; then
    # every committed file is in the table (layout.c lists them by name)
    for f in "$out"/*.inc; do
        grep -q "^#include \"layouts/$(basename "$f")\"" "$here/layout.c" ||
            { echo "gen_layouts: FAIL: attach/layout.c does not include layouts/$(basename "$f")"; status=1; }
    done
fi
if [ -z "$checked" ]; then
    echo "gen_layouts: FAIL: no version could be $([ "$mode" = check ] && echo checked || echo generated) (no usable headers found)"
    exit 1
fi
[ "$mode" = check ] && echo "gen_layouts: checked:$checked"
exit $status
