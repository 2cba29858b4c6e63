-- :checkhealth hotline and :help hotline of editors/nvim in a real headless
-- Neovim (docs/editors.md, "Neovim").
--   1. setup() with the built binary and HOTLINE_PYTHON, a Python file of a
--      project open and its client attached: the report has OK lines for
--      the binary, its version (the binary's own --version), the agent
--      folder, the interpreter and its agent build, the client; no ERROR.
--   2. cmd naming a file that does not exist: an ERROR line for the binary
--      followed by its fix; the project's .venv/bin/python (a link to a
--      script outside the project that leaves a marker when run) is named
--      as the pick and not run.
--   3. :helptags on a copy of the plugin, then :help hotline opens its
--      doc/hotline.txt on the *hotline* tag, and every :Hotline* command
--      the plugin defines has a help tag.
-- Environment: HOTLINE_BIN (the server), HOTLINE_PLUGIN (editors/nvim),
-- HOTLINE_WORK (an empty writable folder), HOTLINE_PYTHON (a real
-- interpreter with an agent build). Exits 0 on success, 1 on the first
-- failed check (cquit).
local plugin = assert(os.getenv('HOTLINE_PLUGIN'), 'HOTLINE_PLUGIN')
local bin = assert(os.getenv('HOTLINE_BIN'), 'HOTLINE_BIN')
local work = assert(os.getenv('HOTLINE_WORK'), 'HOTLINE_WORK')
local python = assert(os.getenv('HOTLINE_PYTHON'), 'HOTLINE_PYTHON')

local function log(msg)
  io.stderr:write('[nvim-health] ' .. msg .. '\n')
end

local function check(what, cond)
  log((cond and 'ok: ' or 'FAIL: ') .. what)
  if not cond then
    vim.cmd('cquit 1')
  end
end

local function write(path, text)
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
end

-- a project folder with main.py; returns its path
local function project(name)
  local root = work .. '/' .. name
  vim.fn.mkdir(root, 'p')
  write(root .. '/pyproject.toml', '')
  write(root .. '/main.py', 'print("hello")\n')
  return root
end

-- :checkhealth hotline from the current buffer; returns the report's lines
-- (logged) and closes its tab page
local function checkhealth()
  vim.cmd('checkhealth hotline')
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  for _, l in ipairs(lines) do
    io.stderr:write('  | ' .. l .. '\n')
  end
  vim.cmd('tabclose')
  return lines
end

-- index of the first line holding kind ('OK', 'ERROR', ...; 0.7 writes
-- "- OK: text", 0.10 "- ✅ OK text") and text, or nil
local function find(lines, kind, text)
  for i, l in ipairs(lines) do
    if l:find(kind, 1, true) and l:find(text, 1, true) then
      return i
    end
  end
  return nil
end

local function buf_has_client(bufnr)
  local cs = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr }) or vim.lsp.buf_get_clients(bufnr)
  for _, c in pairs(cs) do
    if c.name == 'hotline' then
      return true
    end
  end
  return false
end

local ok, err = pcall(function()
  vim.opt.runtimepath:prepend(plugin)
  vim.cmd('filetype on')
  local v = vim.version()
  log(string.format('neovim %d.%d.%d', v.major, v.minor, v.patch))
  local hotline = require('hotline')
  local version = vim.trim(vim.fn.system({ bin, '--version' }))
  check('the binary answers --version: ' .. version, vim.v.shell_error == 0 and version:match('^hotline ') ~= nil)

  -- 1. all good
  local good = project('good')
  hotline.setup({ cmd = { bin, 'lsp' }, python = python })
  vim.cmd('edit ' .. vim.fn.fnameescape(good .. '/main.py'))
  local buf = vim.api.nvim_get_current_buf()
  check('the client attaches to main.py', vim.wait(20000, function() return buf_has_client(buf) end, 50))
  local lines = checkhealth()
  local exe = vim.fn.exepath(bin)
  check('OK line for the binary', find(lines, 'OK', 'hotline binary: ' .. exe) ~= nil)
  check('OK line for its version', find(lines, 'OK', 'version: ' .. version) ~= nil)
  check('OK line for the agent folder', find(lines, 'OK', 'agent folder: ') ~= nil)
  check('OK line for the interpreter', find(lines, 'OK', python .. ' (from python)') ~= nil)
  check('OK line for its agent build', find(lines, 'OK', 'agent for Python ') ~= nil)
  check('OK line for the client', find(lines, 'OK', 'attached to ' .. good .. '/main.py') ~= nil)
  check('the options are listed', find(lines, 'INFO', 'cmd = { "' .. bin .. '", "lsp" }') ~= nil)
  check('no ERROR line', find(lines, 'ERROR', '') == nil)
  vim.cmd('bwipeout!')

  -- 2. a binary that does not exist; a .venv link that must not run
  local missing = work .. '/no-such-dir/hotline'
  local venv = project('venv')
  local marker = work .. '/RAN'
  write(work .. '/outside-python', '#!/bin/sh\ntouch "' .. marker .. '"\nexec "' .. python .. '" "$@"\n')
  vim.loop.fs_chmod(work .. '/outside-python', 493) -- 0755
  vim.fn.mkdir(venv .. '/.venv/bin', 'p')
  assert(vim.loop.fs_symlink(work .. '/outside-python', venv .. '/.venv/bin/python'))
  hotline.setup({ cmd = { missing, 'lsp' } })
  -- no FileType: the plugin would try to start the missing server
  vim.o.eventignore = 'FileType'
  vim.cmd('edit ' .. vim.fn.fnameescape(venv .. '/main.py'))
  vim.o.eventignore = ''
  lines = checkhealth()
  local e = find(lines, 'ERROR', 'hotline binary not found: ' .. missing)
  check('ERROR line for the missing binary', e ~= nil)
  local fix = false
  for i = e + 1, math.min(e + 3, #lines) do
    fix = fix or lines[i]:find("set cmd = { '/full/path/to/hotline', 'lsp' }", 1, true) ~= nil
  end
  check('the fix follows it', fix)
  check("the .venv interpreter is named as the plugin's pick",
    find(lines, 'OK', 'Python: ' .. venv .. '/.venv/bin/python (the project\'s .venv') ~= nil)
  check('and said not to be run', find(lines, 'INFO', 'not run by :checkhealth') ~= nil)
  check('the .venv interpreter did not run', vim.loop.fs_stat(marker) == nil)
  vim.cmd('bwipeout!')

  -- 3. :help hotline after :helptags on a copy
  local copy = work .. '/plugin-copy'
  vim.fn.mkdir(copy, 'p')
  vim.fn.system({ 'cp', '-r', plugin .. '/doc', copy .. '/doc' })
  check('doc/ copied', vim.v.shell_error == 0)
  vim.opt.runtimepath:prepend(copy)
  vim.cmd('helptags ' .. vim.fn.fnameescape(copy .. '/doc'))
  check('helptags wrote doc/tags', vim.loop.fs_stat(copy .. '/doc/tags') ~= nil)
  vim.cmd('help hotline')
  check(':help hotline opens ' .. copy .. '/doc/hotline.txt',
    vim.api.nvim_buf_get_name(0) == copy .. '/doc/hotline.txt' and vim.bo.filetype == 'help')
  check('on the *hotline* tag', vim.fn.getline('.'):find('*hotline*', 1, true) ~= nil)
  vim.cmd('help hotline-health')
  check(':help hotline-health', vim.fn.getline('.'):find('*hotline-health*', 1, true) ~= nil)
  local n = 0
  for name in pairs(vim.api.nvim_get_commands({})) do
    if name:match('^Hotline') then
      n = n + 1
      local found = pcall(vim.cmd, 'help :' .. name)
      check(':help :' .. name, found and vim.fn.getline('.'):find('*:' .. name .. '*', 1, true) ~= nil)
    end
  end
  check('the plugin defines commands (' .. n .. ')', n >= 7)
end)
check('no error: ' .. tostring(err), ok)
vim.cmd('qall!')
