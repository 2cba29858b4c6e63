-- Hotline for Neovim: starts `hotline lsp` for Python buffers and adds what
-- the built-in client does not do by itself on every version: :HotlineRun and
-- friends, CodeLens refresh, the live "executing" marker (sign + end-of-line
-- text naming the library call, both from hotline/executing; the end of a
-- run is hotline/runEnded), and inlay hints as end-of-line virtual text
-- where vim.lsp.inlay_hint does not exist (before 0.10). Works on 0.7.2+.
--
-- All state lives in the table M.state (one per Neovim instance).
local M = {}

local defaults = {
  cmd = { 'hotline', 'lsp' }, -- how to start the server
  python = nil,               -- interpreter; nil: <root>/.venv/bin/python if it links outside <root>, else the server's default (python3)
  args = nil,                 -- default program arguments (list) for :HotlineRun without arguments
  root_markers = { '.git', 'pyproject.toml', 'setup.py', 'setup.cfg' },
  settings = {},              -- extra server settings (docs/configuration.md), merged into initializationOptions
  hints = true,               -- inlay hints (native on 0.10+, virtual text before)
  lenses = true,              -- CodeLens
  executing = true,           -- live marker for the running line
  sign_text = '▶',
}

M.defaults = defaults -- read-only: what setup() starts from (:checkhealth shows it before setup)

M.state = {
  opts = nil,
  client_id = nil,
  root = nil,
  ns_exec = nil, -- namespace: executing-line virtual text
  ns_hint = nil, -- namespace: inlay hints as virtual text (< 0.10)
  exec = nil,    -- last hotline/executing params with a uri, or nil
  running = false,
  runs_ended = 0, -- count of hotline/runEnded received (tests wait on it)
  last_outcome = nil, -- outcome of the last run ('done', 'failed', 'stopped')
}

local has_native_hints = vim.lsp.inlay_hint ~= nil and type(vim.lsp.inlay_hint) == 'table'
  and vim.lsp.inlay_hint.enable ~= nil

local function notify(msg, level)
  vim.notify('hotline: ' .. msg, level or vim.log.levels.INFO)
end

-- The project root of path: the nearest folder up with one of markers
-- (default: the root_markers option), else path's folder.
local function find_root(path, markers)
  markers = markers or M.state.opts.root_markers
  local dir = vim.fn.fnamemodify(path, ':p:h')
  local cur = dir
  while cur and cur ~= '' do
    for _, m in ipairs(markers) do
      if vim.loop.fs_stat(cur .. '/' .. m) then
        return cur
      end
    end
    local parent = vim.fn.fnamemodify(cur, ':h')
    if parent == cur then
      break
    end
    cur = parent
  end
  return dir
end
M.find_root = find_root

local function client()
  local id = M.state.client_id
  return id and vim.lsp.get_client_by_id(id) or nil
end

local function python_buffers()
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.bo[b].filetype == 'python' then
      table.insert(out, b)
    end
  end
  return out
end

-- ---- inlay hints: native or virtual text --------------------------------

local function hints_virtual(bufnr)
  local c = client()
  if not c or not M.state.opts.hints then
    return
  end
  local last = vim.api.nvim_buf_line_count(bufnr)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = last, character = 0 } },
  }
  c.request('textDocument/inlayHint', params, function(err, result)
    if err or not vim.api.nvim_buf_is_valid(bufnr) then
      return
    end
    vim.api.nvim_buf_clear_namespace(bufnr, M.state.ns_hint, 0, -1)
    for _, h in ipairs(result or {}) do
      local label = h.label
      if type(label) == 'table' then
        local parts = {}
        for _, p in ipairs(label) do
          table.insert(parts, p.value)
        end
        label = table.concat(parts)
      end
      local line = h.position.line
      if line < vim.api.nvim_buf_line_count(bufnr) then
        vim.api.nvim_buf_set_extmark(bufnr, M.state.ns_hint, line, 0, {
          virt_text = { { ' ' .. label, 'Comment' } },
          virt_text_pos = 'eol',
        })
      end
    end
  end, bufnr)
end

local function hints_enable(bufnr, on)
  if has_native_hints then
    -- 0.10+: enable(bool, {bufnr=}); some nightlies took (bufnr, bool)
    if not pcall(vim.lsp.inlay_hint.enable, on, { bufnr = bufnr }) then
      pcall(vim.lsp.inlay_hint.enable, bufnr, on)
    end
  elseif on then
    hints_virtual(bufnr)
  else
    vim.api.nvim_buf_clear_namespace(bufnr, M.state.ns_hint, 0, -1)
  end
end

-- ---- lenses ---------------------------------------------------------------

local function lenses_refresh(bufnr)
  if not M.state.opts.lenses or not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  vim.api.nvim_buf_call(bufnr, function()
    pcall(vim.lsp.codelens.refresh)
  end)
end

local function refresh_all()
  for _, b in ipairs(python_buffers()) do
    if client() and vim.lsp.buf_is_attached(b, M.state.client_id) then
      lenses_refresh(b)
      if M.state.opts.hints then
        if has_native_hints then
          hints_enable(b, true)
        else
          hints_virtual(b)
        end
      end
    end
  end
end

-- ---- the live marker ------------------------------------------------------

local function exec_clear()
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_valid(b) then
      pcall(vim.fn.sign_unplace, 'hotline', { buffer = b })
      vim.api.nvim_buf_clear_namespace(b, M.state.ns_exec, 0, -1)
    end
  end
end

local function on_executing(_, params)
  params = params or {}
  exec_clear()
  if type(params.uri) ~= 'string' then
    M.state.exec = nil
    return vim.NIL
  end
  M.state.exec = params
  if not M.state.opts.executing then
    return vim.NIL
  end
  local bufnr = vim.uri_to_bufnr(params.uri)
  if not vim.api.nvim_buf_is_loaded(bufnr) or params.line >= vim.api.nvim_buf_line_count(bufnr) then
    return vim.NIL
  end
  vim.fn.sign_place(0, 'hotline', 'HotlineExecuting', bufnr, { lnum = params.line + 1, priority = 20 })
  -- the text (and the library call in it) comes from the server: no editor
  -- works out which frames are library code
  local text = type(params.text) == 'string' and params.text or '▶'
  vim.api.nvim_buf_set_extmark(bufnr, M.state.ns_exec, params.line, 0, {
    virt_text = { { text, 'HotlineExecuting' } },
    virt_text_pos = 'eol',
  })
  return vim.NIL
end

-- ---- server-to-client requests / notifications ----------------------------

local function on_refresh()
  vim.schedule(refresh_all)
  return vim.NIL
end

-- hotline/runEnded (docs/lsp.md): the run is over and the server has sent
-- its final data; refresh what 0.7 does not refresh by itself.
local function on_run_ended(_, params)
  M.state.running = false
  M.state.last_outcome = type(params) == 'table' and params.outcome or nil
  M.state.runs_ended = M.state.runs_ended + 1
  vim.schedule(refresh_all)
  return vim.NIL
end

-- <root>/.venv/bin/python when it is a virtual environment's link to an
-- interpreter outside the project (python -m venv, virtualenv and uv make
-- such links), else nil. The server executes this interpreter for the runs
-- the user starts; the probe and check of "Optimize this" use it only after
-- such a run (its pyvenv.cfg and .pth files are the repository's). A file
-- inside the project could be anything a repository checked in, so it is
-- used only when named in `python`. quiet: no warning for a refused one
-- (:checkhealth reports it itself).
function M.venv_python(root, quiet)
  local p = root .. '/.venv/bin/python'
  if vim.fn.executable(p) ~= 1 then
    return nil
  end
  local real = vim.loop.fs_realpath(p)
  local top = vim.loop.fs_realpath(root) or root
  if not real or real == top or real:sub(1, #top + 1) == top .. '/' then
    if not quiet then
      notify(p .. ' is not a link to an interpreter outside the project: not used '
        .. '(set python = ... to use it)', vim.log.levels.WARN)
    end
    return nil
  end
  return p
end

-- The interpreter the plugin hands the server for a project root (the
-- initializationOptions' python) and where it comes from: settings.python,
-- else the python option, else M.venv_python(root); nil when none of them
-- names one (the server then picks $VIRTUAL_ENV/bin/python, else python3).
-- opts: default the setup() options. Used by make_config and :checkhealth.
function M.python_for_root(root, opts, quiet)
  opts = opts or M.state.opts
  if opts.settings and opts.settings.python then
    return opts.settings.python, 'settings.python'
  end
  if opts.python then
    return opts.python, 'python'
  end
  local v = M.venv_python(root, quiet)
  if v then
    return v, '.venv'
  end
  return nil, nil
end

local function make_config(bufnr)
  local o = M.state.opts
  local path = vim.api.nvim_buf_get_name(bufnr)
  local root = find_root(path)
  local init = vim.deepcopy(o.settings or {})
  init.python = M.python_for_root(root, o)
  init.args = init.args or o.args
  local caps = vim.lsp.protocol.make_client_capabilities()
  caps.workspace = caps.workspace or {}
  caps.workspace.codeLens = { refreshSupport = true }
  caps.workspace.inlayHint = { refreshSupport = true }
  caps.window = caps.window or {}
  caps.window.workDoneProgress = true
  caps.experimental = caps.experimental or {}
  caps.experimental.hotlineExecuting = o.executing and true or false
  caps.experimental.hotlineRunEnded = true
  local handlers = {
    ['hotline/executing'] = on_executing,
    ['hotline/runEnded'] = on_run_ended,
    ['workspace/codeLens/refresh'] = on_refresh,
  }
  if not has_native_hints then
    handlers['workspace/inlayHint/refresh'] = on_refresh
  end
  return {
    name = 'hotline',
    cmd = o.cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    capabilities = caps,
    init_options = init,
    handlers = handlers,
    on_attach = function(c, b)
      M.state.client_id = c.id
      if o.hints then
        hints_enable(b, true)
      end
      lenses_refresh(b)
    end,
    on_exit = function()
      M.state.client_id = nil
      M.state.running = false
      vim.schedule(exec_clear)
    end,
  }
end

-- Start (or reuse) the server for bufnr.
function M.attach(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local cfg = make_config(bufnr)
  if vim.lsp.start then
    M.state.client_id = vim.lsp.start(cfg, { bufnr = bufnr }) or M.state.client_id
  else
    local c = client()
    if not c or c.is_stopped() then
      M.state.client_id = vim.lsp.start_client(cfg)
    end
    if M.state.client_id then
      vim.lsp.buf_attach_client(bufnr, M.state.client_id)
    end
  end
  return M.state.client_id
end

-- ---- commands ---------------------------------------------------------------

local function exec_command(command, arg, cb)
  local c = client()
  if not c then
    notify('the server is not running (open a Python file first)', vim.log.levels.WARN)
    return
  end
  c.request('workspace/executeCommand', { command = command, arguments = { arg } }, function(err, result)
    if err then
      notify(command .. ': ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif cb then
      cb(result)
    end
  end)
end

-- :HotlineRun [args]: profile the current file. args: list of strings or nil.
function M.run(args)
  local bufnr = vim.api.nvim_get_current_buf()
  if not client() then
    M.attach(bufnr)
  end
  if vim.bo[bufnr].modified then
    vim.cmd('silent write')
  end
  local a = { uri = vim.uri_from_bufnr(bufnr) }
  if args and #args > 0 then
    a.args = args
  end
  M.state.running = true
  exec_command('hotline.run', a, function(result)
    M.state.last_run = result
  end)
end

function M.stop()
  exec_command('hotline.stop', vim.empty_dict())
end

function M.clear()
  exec_command('hotline.clear', vim.empty_dict(), function()
    vim.schedule(refresh_all)
  end)
end

-- :HotlineAttach [pid]: sample a Python process that is already running
-- (docs/attach.md): the live line, hints and lenses as during a run; the
-- target is never stopped or changed. Without a pid, vim.ui.select over
-- hotline.listProcesses (this workspace's processes first).
-- :HotlineAttach! [pid] (memory true): with memory too; gdb loads Hotline's
-- agent into the process until :HotlineDetach (docs/attach.md, "Memory").
function M.attach_process(pid, memory)
  if not client() then
    M.attach(vim.api.nvim_get_current_buf())
  end
  local function go(p)
    M.state.running = true
    local args = { pid = p }
    if memory then
      args.memory = true
      notify(string.format('attaching to %d with memory: gdb stops it for a moment and loads ' ..
        "Hotline's agent into it (memory hooks, a sampler thread) until :HotlineDetach", p),
        vim.log.levels.INFO)
    end
    exec_command('hotline.attach', args, function(result)
      M.state.last_attach = result
    end)
  end
  if pid then
    return go(pid)
  end
  exec_command('hotline.listProcesses', vim.empty_dict(), function(procs)
    procs = procs or {}
    M.state.processes = procs
    if #procs == 0 then
      notify('no Python process to attach to', vim.log.levels.WARN)
      return
    end
    -- by pid, a marimo kernel just before its server (the kernel runs the cells)
    local function rank(p)
      local m = type(p.marimo) == 'table' and p.marimo or {}
      if m.role == 'kernel' and type(m.server) == 'number' then
        return m.server - 0.5
      end
      return p.pid
    end
    table.sort(procs, function(a, b)
      if a.inWorkspace ~= b.inWorkspace then
        return a.inWorkspace
      end
      return rank(a) < rank(b)
    end)
    vim.ui.select(procs, {
      prompt = memory and 'Attach hotline with memory to' or 'Attach hotline to',
      format_item = function(p)
        local name = type(p.label) == 'string' and p.label or p.command
        return string.format('%d  %s%s%s', p.pid, name,
          p.python ~= vim.NIL and p.python and ('  (Python ' .. p.python .. ')') or '',
          p.canAttach and '' or ('  [' .. tostring(p.why) .. ']'))
      end,
    }, function(choice)
      if not choice then
        return
      end
      if not choice.canAttach then
        notify(tostring(choice.why), vim.log.levels.ERROR)
        return
      end
      go(choice.pid)
    end)
  end)
end

-- :HotlineDetach: end the attach; the process runs on.
function M.detach()
  exec_command('hotline.detach', vim.empty_dict())
end

-- :HotlineOpen {file}: show a profile file instead of the last run's: one
-- test's profile of `pytest --hotline` (.hotline/tests/*.jsonl) or a JSON
-- profile of `hotline run --json` (hotline.openProfile, docs/lsp.md).
function M.open_profile(file)
  local path = vim.fn.fnamemodify(vim.fn.expand(file), ':p')
  exec_command('hotline.openProfile', { path = path }, function(result)
    vim.schedule(function()
      refresh_all()
      notify(string.format('showing %s (%.2f s sampled)', path,
        result and result.seconds or 0))
    end)
  end)
end

-- :HotlineShow: the profile summary in a scratch buffer.
function M.show()
  exec_command('hotline.showProfile', { show = false }, function(result)
    local text = result and result.text or ''
    vim.cmd('new')
    local b = vim.api.nvim_get_current_buf()
    vim.bo[b].buftype = 'nofile'
    vim.bo[b].bufhidden = 'wipe'
    vim.api.nvim_buf_set_lines(b, 0, -1, false, vim.split(text, '\n', { plain = true }))
    vim.bo[b].modifiable = false
  end)
end

-- Opens path with the system's opener: vim.ui.open on Neovim 0.10+, else
-- xdg-open (open on macOS), detached.
function M.open(path)
  if vim.ui.open then
    return vim.ui.open(path)
  end
  local opener = vim.fn.has('mac') == 1 and 'open' or 'xdg-open'
  if vim.fn.jobstart({ opener, path }, { detach = true }) <= 0 then
    notify('cannot run ' .. opener .. '; the report is ' .. path, vim.log.levels.WARN)
  end
end

-- :HotlineFlame: the HTML report (flame graph, lines, memory, leaks;
-- docs/pictures.md) of the profile the server saved for this project
-- (<root>/.hotline/profile.json), written by `hotline view --html` next to
-- it as report.html and opened in the browser. Returns the report's path.
function M.flame()
  local c = client()
  local buf = vim.api.nvim_buf_get_name(0)
  local root = (c and c.config.root_dir) or (buf ~= '' and find_root(buf)) or vim.fn.getcwd()
  local profile = root .. '/.hotline/profile.json'
  if vim.fn.filereadable(profile) == 0 then
    notify('no profile in ' .. root .. '/.hotline yet: :HotlineRun first', vim.log.levels.WARN)
    return nil
  end
  local out = root .. '/.hotline/report.html'
  local res = vim.fn.system({ M.state.opts.cmd[1], 'view', '--html', out, profile })
  if vim.v.shell_error ~= 0 then
    notify('hotline view --html: ' .. res, vim.log.levels.ERROR)
    return nil
  end
  M.open(out)
  return out
end

function M.setup(opts)
  M.state.opts = vim.tbl_deep_extend('force', vim.deepcopy(defaults), opts or {})
  M.state.ns_exec = vim.api.nvim_create_namespace('hotline_executing')
  M.state.ns_hint = vim.api.nvim_create_namespace('hotline_hints')
  vim.cmd('highlight default link HotlineExecuting DiagnosticInfo')
  vim.cmd('highlight default link HotlineExecutingLine CursorLine')
  vim.fn.sign_define('HotlineExecuting', { text = M.state.opts.sign_text, texthl = 'HotlineExecuting',
    linehl = 'HotlineExecutingLine' })
  local group = vim.api.nvim_create_augroup('hotline', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = 'python',
    callback = function(ev)
      M.attach(ev.buf)
    end,
  })
  if not has_native_hints then -- virtual-text hints follow edits on save
    vim.api.nvim_create_autocmd('BufWritePost', {
      group = group,
      pattern = '*.py',
      callback = function(ev)
        hints_virtual(ev.buf)
        lenses_refresh(ev.buf)
      end,
    })
  end
  vim.api.nvim_create_user_command('HotlineRun', function(c)
    M.run(c.fargs)
  end, { nargs = '*', desc = 'Profile the current Python file with hotline' })
  vim.api.nvim_create_user_command('HotlineStop', M.stop, { desc = 'Stop the hotline run' })
  vim.api.nvim_create_user_command('HotlineAttach', function(c)
    M.attach_process(c.args ~= '' and tonumber(c.args) or nil, c.bang)
  end, {
    nargs = '?',
    bang = true,
    desc = 'Profile a running Python process (pick one without a pid; ! with memory: injects the agent)',
  })
  vim.api.nvim_create_user_command('HotlineDetach', M.detach, { desc = 'Detach from the process' })
  vim.api.nvim_create_user_command('HotlineClear', M.clear, { desc = 'Clear hotline results' })
  vim.api.nvim_create_user_command('HotlineShow', M.show, { desc = 'Show the hotline profile' })
  vim.api.nvim_create_user_command('HotlineOpen', function(c)
    M.open_profile(c.args)
  end, { nargs = 1, complete = 'file', desc = "Show a profile file (a test's, a saved JSON)" })
  vim.api.nvim_create_user_command('HotlineFlame', function()
    M.flame()
  end, { desc = 'Open the HTML report (flame graph, memory) of the hotline profile' })
  for _, b in ipairs(python_buffers()) do
    M.attach(b)
  end
end

return M
