#!/usr/bin/env bash
# Every C file in the tree follows .clang-format (clang-format 14, Debian's
# clang-format package, as .ci/install-deps installs). Prints the files that
# do not and the command that fixes them; exit 1 if any.
#   bash tests/format-check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
command -v clang-format >/dev/null || { echo "format-check: clang-format missing (apt-get install clang-format)" >&2; exit 1; }
bad=()
while IFS= read -r f; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.c' '*.h')
if [ ${#bad[@]} -gt 0 ]; then
    echo "format-check: ${#bad[@]} file(s) not formatted:" >&2
    printf '  %s\n' "${bad[@]}" >&2
    echo "fix: clang-format -i ${bad[*]}" >&2
    exit 1
fi
echo "format-check: $(git ls-files '*.c' '*.h' | wc -l) files formatted"
