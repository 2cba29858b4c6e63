-- Issue 13: :HotlineAttach in a real headless Neovim. A Python program the
-- editor did not start (its own session) runs in the project; :HotlineAttach
-- without a pid lists it through vim.ui.select (replaced here by a stand-in
-- that records the items and picks ours), the live marker then names its
-- hot line, :HotlineDetach ends the attach (hotline/runEnded, outcome
-- stopped) and the program runs on; :HotlineAttach! <pid> attaches with
-- memory (the agent injected with gdb) and detaches the same way;
-- :HotlineAttach <pid> attaches again by pid. Environment: HOTLINE_BIN, HOTLINE_PLUGIN, HOTLINE_WORK (an
-- empty writable folder), HOTLINE_PYTHON (an interpreter attach reads).
-- Exits 0 on success, 1 on the first failed check (cquit).
local plugin = assert(os.getenv('HOTLINE_PLUGIN'), 'HOTLINE_PLUGIN')
local bin = assert(os.getenv('HOTLINE_BIN'), 'HOTLINE_BIN')
local work = assert(os.getenv('HOTLINE_WORK'), 'HOTLINE_WORK')
local python = assert(os.getenv('HOTLINE_PYTHON'), 'HOTLINE_PYTHON')
local timeout = 30000

local function log(msg)
  io.stderr:write('[nvim-attach] ' .. msg .. '\n')
end

local job, stop_file
local function fail(msg)
  log('FAIL: ' .. msg)
  -- never leave the program spinning: it is detached from Neovim
  if stop_file then
    pcall(vim.fn.writefile, {}, stop_file)
  end
  if job then
    pcall(vim.fn.jobstop, job)
  end
  vim.cmd('cquit 1')
end

local function check(what, cond)
  if not cond then
    fail(what)
  end
  log('ok: ' .. what)
end

local function wait(what, pred)
  local ok = vim.wait(timeout, function()
    local good, res = pcall(pred)
    return good and res
  end, 50)
  check(what, ok)
end

local ok, err = pcall(function()
  vim.opt.runtimepath:prepend(plugin)
  vim.cmd('filetype on')
  local root = work .. '/proj'
  vim.fn.mkdir(root, 'p')
  vim.fn.writefile({}, root .. '/pyproject.toml')
  local prog = root .. '/service.py'
  vim.fn.writefile({
    'import os, sys',
    'stop = sys.argv[1]',
    'def serve():',
    '    n = 0',
    '    while not os.path.exists(stop):',
    '        n += sum(i * i for i in range(3000))  # hot',
    'serve()',
  }, prog)
  local stop = root .. '/stop'
  stop_file = stop
  -- detach: its own session, as a program started from a terminal
  -- (its status through on_exit: jobwait on a job whose exit Neovim has
  -- already handled answers -3, not the status)
  local exit_code
  job = vim.fn.jobstart({ python, prog, stop }, {
    cwd = root,
    detach = true,
    on_exit = function(_, code)
      exit_code = code
    end,
  })
  check('program started', job > 0)
  local pid = vim.fn.jobpid(job)

  local hotline = require('hotline')
  hotline.setup({ cmd = { bin, 'lsp' } })
  vim.cmd('edit ' .. vim.fn.fnameescape(prog))
  wait('server started', function()
    return hotline.state.client_id ~= nil and vim.lsp.get_client_by_id(hotline.state.client_id)
      .initialized
  end)

  local items, saved = nil, vim.ui.select
  vim.ui.select = function(list, opts, on_choice)
    items = list
    for _, p in ipairs(list) do
      if p.pid == pid then
        log('picked: ' .. opts.format_item(p))
        return on_choice(p)
      end
    end
    on_choice(nil)
  end
  vim.cmd('HotlineAttach')
  wait('the list offered our program', function()
    return items ~= nil
  end)
  vim.ui.select = saved
  local mine
  for _, p in ipairs(items) do
    if p.pid == pid then
      mine = p
    end
  end
  log('listed: ' .. vim.inspect(mine))
  check('our program is in the list, in the workspace, attachable',
    mine and mine.inWorkspace and mine.canAttach and mine.main == vim.loop.fs_realpath(prog))
  check('workspace processes come first', items[1].inWorkspace)
  wait('the live marker on the hot line', function()
    local e = hotline.state.exec
    return e and e.line == 5 and vim.uri_to_fname(e.uri) == vim.loop.fs_realpath(prog)
  end)
  local ended = hotline.state.runs_ended
  vim.cmd('HotlineDetach')
  wait('detached (hotline/runEnded)', function()
    return hotline.state.runs_ended > ended
  end)
  check('outcome stopped', hotline.state.last_outcome == 'stopped')
  check('the program runs on', exit_code == nil and vim.fn.jobwait({ job }, 0)[1] == -1)

  -- :HotlineAttach! pid: with memory (gdb injects the agent; the server's
  -- reply says memory), then detached: the program runs on
  hotline.state.exec = nil
  vim.cmd('HotlineAttach! ' .. pid)
  wait('attached with memory: the reply says so', function()
    return hotline.state.last_attach and hotline.state.last_attach.memory == true
  end)
  wait('attached with memory: the live marker on the hot line', function()
    return hotline.state.exec and hotline.state.exec.line == 5
  end)
  ended = hotline.state.runs_ended
  vim.cmd('HotlineDetach')
  wait('detached from the memory attach', function()
    return hotline.state.runs_ended > ended
  end)
  check('memory attach: outcome stopped', hotline.state.last_outcome == 'stopped')
  check('memory attach: the program runs on', exit_code == nil and vim.fn.jobwait({ job }, 0)[1] == -1)

  hotline.state.last_attach = nil
  vim.cmd('HotlineAttach ' .. pid)
  wait('attached by pid: the reply has no memory', function()
    return hotline.state.last_attach and hotline.state.last_attach.memory == false
  end)
  wait('attached by pid: the live marker again', function()
    return hotline.state.exec and hotline.state.exec.line == 5
  end)
  ended = hotline.state.runs_ended
  vim.fn.writefile({}, stop)
  wait('the program ended while attached', function()
    return hotline.state.runs_ended > ended
  end)
  wait('the program exited', function()
    return exit_code ~= nil
  end)
  check('its exit status is its own (0)', exit_code == 0)
end)
if not ok then
  fail(tostring(err))
end
log('all checks passed')
vim.cmd('qall!')
