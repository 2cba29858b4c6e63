#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#   0. every C file follows .clang-format (tests/format-check.sh);
#   1. normal build (RelWithDebInfo), every ctest, then the editor
#      end-to-end tests (real Neovim, real VS Code in code-server);
#   1a. Release build (what packagers and pip build: -O2, whose extra
#      analysis finds warnings the others do not, and libuv and jansson
#      linked statically, HOTLINE_STATIC_DEPS=ON: the binary the VS Code
#      .vsix carries, which the editor step below installs); every build
#      here has -Werror (HOTLINE_WERROR=ON), which a user's build does not;
#      Among the ctests: attach_layouts (the committed attach/layouts/ rows
#      regenerated from every Python's headers here, diffed) and
#      attach_one_python.* (a second build, build/one-python/, with
#      -DHOTLINE_PYTHONS=/usr/bin/python3 alone, attaches to every version);
#   1b. Python 3.14 and 3.15 from a Debian sid root file system
#      (tests/py-sid.sh, build-sid/ and .py-sid/): the agent built against
#      their headers, every test that spawns a real interpreter, and the two
#      attach checks above for 3.14/3.15 (a loud "NOT RUN" banner when the
#      tree cannot be built, a failure under CI);
#   2. ASan+UBSan build of protocol/ and server/, every ctest again except
#      the agent-only `profiler` label (no sanitized code in those; the
#      transcript harness fails a case whose server prints a sanitizer or
#      leak report), without the interpreter matrix
#      (-DHOTLINE_TEST_MATRIX=OFF: each case under one interpreter, since
#      the sanitized code, the server's, is the same for every one);
#   2a. ThreadSanitizer (build-tsan/, -DHOTLINE_TSAN=ON, `ctest -L tsan`):
#      the agent's threads in a real interpreter, the server's thread pool
#      and listProcesses' thread (tests/tsan/CMakeLists.txt);
#   3. libFuzzer targets over their seed corpora, HOTLINE_FUZZ_SECONDS each
#      (default 36), $(nproc) at a time: a target is one single-threaded
#      process that stops after its seconds of wall time, so on 2 cores two
#      at once each get the seconds and the core that one alone got.
# Build folders: build/, build-release/, build-sid/, build-asan/, build-tsan/,
# build-fuzz/ at the repository root (and the sid tree in .py-sid/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
fuzz_seconds=${HOTLINE_FUZZ_SECONDS:-36}  # 5 targets, 2 at a time: about 2 minutes
step() { printf '\n=== %s ===\n' "$*"; }

step "format (.clang-format, tests/format-check.sh)"
bash "$root/tests/format-check.sh"

step "build"
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOTLINE_WERROR=ON >/dev/null
cmake --build "$root/build" -j"$jobs"
step "build (Release, -Werror)"
cmake -S "$root" -B "$root/build-release" -DCMAKE_BUILD_TYPE=Release -DHOTLINE_WERROR=ON \
  -DHOTLINE_STATIC_DEPS=ON >/dev/null
cmake --build "$root/build-release" -j"$jobs"
step "tests"
ctest --test-dir "$root/build" --output-on-failure -j"$jobs"

step "Python 3.14 / 3.15 (Debian sid tree, tests/py-sid.sh)"
bash "$root/tests/py-sid.sh"

step "editors (Neovim, VS Code in code-server)"
bash "$root/tests/editors/run.sh" "$root/build" "$root/build-release"

step "build (ASan+UBSan)"
cmake -S "$root" -B "$root/build-asan" -DCMAKE_BUILD_TYPE=Debug -DHOTLINE_SANITIZE=ON \
  -DHOTLINE_TEST_MATRIX=OFF -DHOTLINE_WERROR=ON >/dev/null
cmake --build "$root/build-asan" -j"$jobs"
step "tests (ASan+UBSan)"
# Label `profiler` is left out here: those tests run the agent (which is never
# sanitized: it is loaded into Python) through their own Python harness, with
# no sanitized code in the process tree, so they only repeat the first pass —
# and they are the wall-clock accuracy tests, the ones this shared 2-core
# machine makes noisy. Everything that runs the hotline binary stays in.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir "$root/build-asan" --output-on-failure -j"$jobs" -LE '^profiler$'

step "ThreadSanitizer (agent threads, server thread pool)"
cmake -S "$root" -B "$root/build-tsan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHOTLINE_TSAN=ON \
  -DHOTLINE_TEST_MATRIX=OFF -DHOTLINE_WERROR=ON >/dev/null
cmake --build "$root/build-tsan" -j"$jobs" --target hotline_tsan_all
ctest --test-dir "$root/build-tsan" --output-on-failure -j"$jobs" -L '^tsan$'

step "fuzz (${fuzz_seconds}s per target)"
cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_C_COMPILER=clang -DHOTLINE_FUZZ=ON \
  -DHOTLINE_WERROR=ON -DHOTLINE_FUZZ_SECONDS="$fuzz_seconds" >/dev/null
cmake --build "$root/build-fuzz" -j"$jobs" --target fuzz_framing fuzz_lsp fuzz_elfsym \
  fuzz_agent_wire fuzz_profile_load
ctest --test-dir "$root/build-fuzz" --output-on-failure -j"$jobs" -L fuzz
