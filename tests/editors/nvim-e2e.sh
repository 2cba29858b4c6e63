#!/usr/bin/env bash
# Runs tests/editors/nvim_e2e.lua in a real headless Neovim against the
# hotline binary in the build folder $1. Installs Debian's neovim if missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: nvim-e2e.sh BUILD_DIR}" && pwd)
command -v nvim >/dev/null || dpkg -s neovim >/dev/null 2>&1 || apt-get install -y neovim >/dev/null \
  || { apt-get update -qq >/dev/null && apt-get install -y neovim >/dev/null; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$here/project" "$work/project"
git -C "$work/project" init -q 2>/dev/null || touch "$work/project/pyproject.toml"
export HOTLINE_BIN="$build/hotline" HOTLINE_PLUGIN="$root/editors/nvim" HOTLINE_PROJECT="$work/project"
export XDG_STATE_HOME="$work/state" XDG_DATA_HOME="$work/data" XDG_CONFIG_HOME="$work/config"
# the whole test has its own limit; each wait inside has one too
timeout 120 nvim --headless --clean -n -c "luafile $here/nvim_e2e.lua" </dev/null
# the .venv interpreter pick (no server needed)
mkdir -p "$work/venv"
HOTLINE_WORK="$work/venv" HOTLINE_PYTHON="$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" \
  timeout 60 nvim --headless --clean -n -c "luafile $here/nvim_venv.lua" </dev/null
# :checkhealth hotline (the built binary, then a missing one) and :help hotline
mkdir -p "$work/health"
HOTLINE_WORK="$work/health" HOTLINE_PYTHON="$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" \
  timeout 60 nvim --headless --clean -n -c "luafile $here/nvim_health.lua" </dev/null
# :HotlineFlame: the HTML report of the saved profile, opened (no server needed)
mkdir -p "$work/flame"
HOTLINE_WORK="$work/flame" timeout 60 nvim --headless --clean -n -c "luafile $here/nvim_flame.lua" </dev/null
# :HotlineAttach / :HotlineDetach on a program the editor did not start
mkdir -p "$work/attach"
HOTLINE_WORK="$work/attach" HOTLINE_PYTHON="$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')" \
  timeout 90 nvim --headless --clean -n -c "luafile $here/nvim_attach.lua" </dev/null
