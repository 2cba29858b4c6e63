-- Issue 10, item 8: editors/nvim picks <root>/.venv/bin/python by itself,
-- and the server executes that interpreter. M.venv_python takes it only when
-- it is a virtual environment's link to an interpreter outside the project;
-- an executable checked in under .venv/bin is not picked.
-- Environment: HOTLINE_PLUGIN (editors/nvim), HOTLINE_WORK (an empty
-- writable folder), HOTLINE_PYTHON (a real interpreter outside it).
-- Exits 0 on success, 1 on the first failed check (cquit).
local plugin = assert(os.getenv('HOTLINE_PLUGIN'), 'HOTLINE_PLUGIN')
local work = assert(os.getenv('HOTLINE_WORK'), 'HOTLINE_WORK')
local python = assert(os.getenv('HOTLINE_PYTHON'), 'HOTLINE_PYTHON')

local function check(what, cond)
  io.stderr:write('[nvim-venv] ' .. (cond and 'ok: ' or 'FAIL: ') .. what .. '\n')
  if not cond then
    vim.cmd('cquit 1')
  end
end

local ok, err = pcall(function()
  vim.opt.runtimepath:prepend(plugin)
  local hotline = require('hotline')
  hotline.setup({})
  local function project(name)
    local root = work .. '/' .. name
    vim.fn.mkdir(root .. '/.venv/bin', 'p')
    return root
  end

  local none = project('none')
  check('no interpreter in .venv: none picked', hotline.venv_python(none) == nil)

  local linked = project('linked')
  assert(vim.loop.fs_symlink(python, linked .. '/.venv/bin/python'))
  check('a venv link to ' .. python .. ' is picked',
    hotline.venv_python(linked) == linked .. '/.venv/bin/python')

  local planted = project('planted')
  local f = assert(io.open(planted .. '/.venv/bin/python', 'w'))
  f:write('#!/bin/sh\ntouch "$(dirname "$0")/MARKER"\n')
  f:close()
  vim.loop.fs_chmod(planted .. '/.venv/bin/python', 493) -- 0755
  check('an executable file checked in under .venv/bin is not picked',
    hotline.venv_python(planted) == nil)

  local inside = project('inside')
  f = assert(io.open(inside .. '/fake-python', 'w'))
  f:write('#!/bin/sh\n')
  f:close()
  vim.loop.fs_chmod(inside .. '/fake-python', 493)
  assert(vim.loop.fs_symlink(inside .. '/fake-python', inside .. '/.venv/bin/python'))
  check('a link to a file inside the project is not picked', hotline.venv_python(inside) == nil)
end)
check('no error: ' .. tostring(err), ok)
vim.cmd('qall!')
