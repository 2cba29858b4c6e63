-- Issue 15: :HotlineFlame writes <root>/.hotline/report.html with `hotline
-- view --html` from the saved profile and opens it: through vim.ui.open
-- where Neovim has it (0.10+), else through xdg-open (a stand-in on PATH
-- records what it was given). No server is needed.
-- Environment: HOTLINE_PLUGIN (editors/nvim), HOTLINE_BIN (the built
-- hotline), HOTLINE_WORK (an empty writable folder).
-- Exits 0 on success, 1 on the first failed check (cquit).
local plugin = assert(os.getenv('HOTLINE_PLUGIN'), 'HOTLINE_PLUGIN')
local bin = assert(os.getenv('HOTLINE_BIN'), 'HOTLINE_BIN')
local work = assert(os.getenv('HOTLINE_WORK'), 'HOTLINE_WORK')

local function check(what, cond)
  io.stderr:write('[nvim-flame] ' .. (cond and 'ok: ' or 'FAIL: ') .. what .. '\n')
  if not cond then
    vim.cmd('cquit 1')
  end
end

local function read(path)
  local f = io.open(path, 'r')
  if not f then
    return nil
  end
  local s = f:read('*a')
  f:close()
  return s
end

local ok, err = pcall(function()
  vim.opt.runtimepath:prepend(plugin)
  local hotline = require('hotline')
  hotline.setup({ cmd = { bin, 'lsp' } })
  local root = work .. '/proj ü'
  vim.fn.mkdir(root .. '/.hotline', 'p')
  vim.fn.writefile({}, root .. '/pyproject.toml')
  vim.cmd('cd ' .. vim.fn.fnameescape(root))
  check('no profile yet: nothing written', hotline.flame() == nil)

  local prog = root .. '/app.py'
  local profile = vim.fn.json_encode({
    version = 1, program = prog, samples = 3,
    files = { [prog] = { lines = { ['2'] = { python_s = 0.03, samples = 3 } } } },
    stacks = { { frames = { { file = prog, name = 'work', line = 2 },
                            { file = prog, name = '<module>', line = 5 } },
                 samples = 3, seconds = 0.03 } },
  })
  vim.fn.writefile({ profile }, root .. '/.hotline/profile.json')

  -- Neovim 0.10+: vim.ui.open
  local opened
  local saved = vim.ui.open
  vim.ui.open = function(p)
    opened = p
  end
  local out = hotline.flame()
  vim.ui.open = saved
  check('report written where said', out == root .. '/.hotline/report.html')
  local page = read(out) or ''
  check('it is the HTML report', page:find('<title>Hotline report</title>', 1, true) ~= nil)
  check('with the profile in it', page:find('work (' .. prog .. ':2)', 1, true) ~= nil)
  check('vim.ui.open got it', opened == out)

  -- before 0.10: xdg-open, detached
  vim.ui.open = nil
  local fake = work .. '/bin'
  vim.fn.mkdir(fake, 'p')
  vim.fn.writefile({ '#!/bin/sh', 'printf "%s" "$1" > "' .. work .. '/xdg-got"' }, fake .. '/xdg-open')
  vim.fn.setfperm(fake .. '/xdg-open', 'rwx------')
  vim.env.PATH = fake .. ':' .. vim.env.PATH
  os.remove(out)
  check('written again', hotline.flame() == out and read(out) ~= nil)
  local got = vim.wait(10000, function()
    return read(work .. '/xdg-got') == out
  end, 20)
  vim.ui.open = saved
  check('xdg-open got the report', got)
  check(':HotlineFlame is a command', vim.fn.exists(':HotlineFlame') == 2)
end)
if not ok then
  io.stderr:write('[nvim-flame] FAIL: ' .. tostring(err) .. '\n')
  vim.cmd('cquit 1')
end
vim.cmd('qall!')
