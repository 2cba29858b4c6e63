-- :checkhealth hotline (Neovim 0.7.2 and newer; 0.7 finds lua/<name>/health.lua
-- and calls its check()). Reports, for the buffer :checkhealth was started
-- from: setup() called, the server binary (the cmd option, looked up on PATH
-- like the LSP client does) and its --version, the agent folder the server
-- will use (as server/proc/session.c finds it), the Python the plugin hands
-- the server for this project (hotline.python_for_root, the plugin's own
-- pick) and whether the agent has a build for it, the hotline LSP client on
-- the buffer, and the options. Each failing check says how to fix it.
--
-- The only programs run are the hotline binary (--version) and an
-- interpreter the user chose (the python or settings.python option,
-- $VIRTUAL_ENV's, python3 on PATH), with -I -S and a fixed one-line
-- program. The project's .venv/bin/python is never run here: its
-- pyvenv.cfg is the repository's, and the server itself runs it only for a
-- run the user starts (docs/editors.md, "Interpreter").
local M = {}

local hotline = require('hotline')

-- vim.health.start/ok/... (0.10; 0.9 has both), vim.health.report_* (0.8),
-- require('health').report_* (0.7).
local function reporter()
  local h = vim.health
  if type(h) == 'table' and h.start and h.ok then
    return { start = h.start, ok = h.ok, info = h.info, warn = h.warn, error = h.error }
  end
  if not (type(h) == 'table' and h.report_start) then
    h = require('health')
  end
  return { start = h.report_start, ok = h.report_ok, info = h.report_info, warn = h.report_warn,
    error = h.report_error }
end

local function inspect1(v)
  return vim.inspect(v, { newline = ' ', indent = '' })
end

local function is_dir(p)
  local st = p and vim.loop.fs_stat(p)
  return st ~= nil and st.type == 'directory'
end

-- Runs argv (no shell) and returns its stdout lines, or nil and why.
-- At most ms milliseconds (default 5000).
local function run(argv, ms)
  local res = {}
  local ok, id = pcall(vim.fn.jobstart, argv, {
    stdout_buffered = true,
    stderr_buffered = true,
    on_stdout = function(_, d) res.out = d end,
    on_stderr = function(_, d) res.err = d end,
    on_exit = function(_, code) res.code = code end,
  })
  if not ok or id <= 0 then
    return nil, 'cannot start ' .. tostring(argv[1])
  end
  local rc = vim.fn.jobwait({ id }, ms or 5000)[1]
  if rc == -1 then
    vim.fn.jobstop(id)
    return nil, string.format('%s did not answer within %d s', argv[1], (ms or 5000) / 1000)
  end
  vim.wait(1000, function() return res.code ~= nil and res.out ~= nil end, 10)
  local out = vim.tbl_filter(function(l) return l ~= '' end, res.out or {})
  if rc ~= 0 then
    local err = table.concat(vim.tbl_filter(function(l) return l ~= '' end, res.err or {}), ' ')
    return nil, string.format('exit status %d%s', rc, err ~= '' and (': ' .. err) or '')
  end
  return out
end

-- The buffer :checkhealth was started from: the current one unless it is
-- the health report itself (0.7 opens it in a new tab page before calling
-- check(); newer versions also take :vertical checkhealth, a split), else
-- the previous window's, else the previous tab page's current window's.
-- nil when none is a file buffer.
local function source_buffer()
  local function usable(b)
    return b and b > 0 and vim.api.nvim_buf_is_valid(b) and vim.bo[b].buftype == ''
      and vim.bo[b].filetype ~= 'checkhealth'
  end
  local cands = { vim.api.nvim_get_current_buf() }
  local prev_win = vim.fn.winnr('#')
  if prev_win > 0 then
    table.insert(cands, vim.fn.winbufnr(prev_win))
  end
  local prev_tab = vim.fn.tabpagenr('#')
  if prev_tab > 0 then
    local bufs = vim.fn.tabpagebuflist(prev_tab)
    if type(bufs) == 'table' then
      table.insert(cands, bufs[vim.fn.tabpagewinnr(prev_tab)])
    end
  end
  for _, b in ipairs(cands) do
    if usable(b) then
      return b
    end
  end
  return nil
end

-- The server's agent folder for binary bin (session_agent_dir in
-- server/proc/session.c): $HOTLINE_AGENT_PATH, else <exe dir>/python, else
-- <exe dir>/../lib/hotline/python. Returns the folder or nil, and the
-- places looked at.
local function agent_dir(bin)
  local env = vim.env.HOTLINE_AGENT_PATH
  if env and env ~= '' then
    return is_dir(env) and env or nil, '$HOTLINE_AGENT_PATH=' .. env
  end
  local dir = vim.fn.fnamemodify(vim.loop.fs_realpath(bin) or bin, ':h')
  local tried = { dir .. '/python', dir .. '/../lib/hotline/python' }
  for _, d in ipairs(tried) do
    if is_dir(d) then
      return vim.loop.fs_realpath(d) or d, table.concat(tried, ' and ')
    end
  end
  return nil, table.concat(tried, ' and ')
end

-- The EXT_SUFFIXes the agent folder has a build for (_agent<EXT_SUFFIX>).
local function agent_builds(dir)
  local out = {}
  for _, f in ipairs(vim.fn.glob(dir .. '/_hotline_agent/_agent*', false, true)) do
    table.insert(out, (vim.fn.fnamemodify(f, ':t'):gsub('^_agent', '')))
  end
  return out
end

local function check_setup(r)
  local opts = hotline.state.opts
  if opts then
    r.ok('require("hotline").setup() was called')
    return opts
  end
  r.error('require("hotline").setup() has not been called: the plugin starts nothing',
    { 'Call require("hotline").setup({}) in your init.lua (the checks below use the default '
      .. 'options), see :help hotline-setup' })
  return vim.deepcopy(hotline.defaults)
end

-- Returns the binary's full path, or nil.
local function check_binary(r, opts)
  local cmd = opts.cmd
  if type(cmd) ~= 'table' or type(cmd[1]) ~= 'string' or cmd[1] == '' then
    r.error('the cmd option is not a list starting with a program: ' .. inspect1(cmd),
      { "Set cmd = { 'hotline', 'lsp' } (or the binary's full path) in require('hotline').setup()." })
    return nil
  end
  local bin = vim.fn.exepath(cmd[1])
  if bin == '' then
    r.error('hotline binary not found: ' .. cmd[1]
      .. (cmd[1]:find('/', 1, true) and ' (no such executable file)' or ' (not on $PATH)'),
      { "Install hotline on your $PATH or set cmd = { '/full/path/to/hotline', 'lsp' } "
        .. "in require('hotline').setup()." })
    return nil
  end
  r.ok('hotline binary: ' .. bin)
  local out, err = run({ bin, '--version' })
  if out and out[1] and out[1]:match('^hotline ') then
    r.ok('version: ' .. out[1])
  else
    r.error(bin .. ' --version failed: ' .. (err or ('unexpected output: ' .. inspect1(out))),
      { "Point cmd in require('hotline').setup() at a working hotline binary (rebuild it: "
        .. 'cmake --build build).' })
    return nil
  end
  local dir, tried = agent_dir(bin)
  if dir then
    local builds = agent_builds(dir)
    r.ok('agent folder: ' .. dir .. ' (builds: '
      .. (#builds > 0 and table.concat(builds, ', ') or 'none') .. ')')
  else
    r.error('no agent folder for ' .. bin .. ' (looked at ' .. tried .. '): runs cannot profile',
      { 'Use the binary of a complete build or install (it has python/ or ../lib/hotline/python '
        .. 'next to it), or set $HOTLINE_AGENT_PATH to that folder.' })
  end
  return bin, dir
end

-- The interpreter the server will use for root, as the plugin and then the
-- server pick it; reports it and whether the agent has a build for it.
local function check_python(r, opts, root, adir)
  local py, src = hotline.python_for_root(root, opts, true)
  local venv_link = root .. '/.venv/bin/python'
  if not src and vim.fn.executable(venv_link) == 1 then
    r.warn(venv_link .. ' is not a link to an interpreter outside the project: not used',
      { "If you trust this project's interpreter, set python = '" .. venv_link
        .. "' in require('hotline').setup()." })
  end
  if not src then
    -- the server's own pick (pick_python in server/proc/session.c); the
    -- server inherits Neovim's environment
    local venv = vim.env.VIRTUAL_ENV
    if venv and venv ~= '' and vim.fn.executable(venv .. '/bin/python') == 1 then
      py, src = venv .. '/bin/python', '$VIRTUAL_ENV, the server\'s default'
    else
      py, src = 'python3', 'python3 on $PATH, the server\'s default'
    end
  end
  local exe = vim.fn.exepath(py)
  if exe == '' then
    r.error('Python interpreter not found: ' .. py .. ' (from ' .. src .. ')',
      { "Set python = '/full/path/to/python3' in require('hotline').setup() "
        .. '(or install python3 on $PATH).' })
    return
  end
  if src == '.venv' then
    -- picked by the plugin for runs the user starts; not run here
    r.ok(string.format('Python: %s (the project\'s .venv, a link to %s)', py,
      vim.loop.fs_realpath(py) or '?'))
    r.info('not run by :checkhealth (its pyvenv.cfg is the repository\'s), so its agent build is '
      .. 'not checked; a run reports a missing one')
    return
  end
  local out, err = run({ exe, '-I', '-S', '-c',
    "import sys,sysconfig;print(sysconfig.get_config_var('EXT_SUFFIX'));"
    .. "print('%d.%d.%d'%sys.version_info[:3])" })
  if not out or not out[2] then
    r.error(exe .. ' does not run: ' .. tostring(err or 'no output'),
      { "Set python in require('hotline').setup() to a working CPython 3 interpreter." })
    return
  end
  local suffix, version = out[1], out[2]
  r.ok(string.format('Python %s: %s (from %s)', version, exe, src))
  if not adir then
    return -- the binary check reported it
  end
  local agent = adir .. '/_hotline_agent/_agent' .. suffix
  if vim.loop.fs_stat(agent) then
    r.ok(string.format('agent for Python %s: %s', version, agent))
  else
    local builds = agent_builds(adir)
    r.error(string.format('no agent build for Python %s (%s) in %s (builds: %s)', version, suffix,
      adir, #builds > 0 and table.concat(builds, ', ') or 'none'),
      { string.format('Rebuild hotline with this interpreter (cmake -DHOTLINE_PYTHONS=%s) or set '
        .. "python in require('hotline').setup() to one it has a build for.", exe) })
  end
end

local function buf_clients(bufnr)
  if vim.lsp.get_clients then -- 0.10+
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  local out = {}
  for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do -- 0.7-0.9: id -> client
    table.insert(out, c)
  end
  return out
end

local function check_client(r, bufnr)
  if not bufnr then
    r.info('no file buffer: open a Python file and run :checkhealth hotline again for the '
      .. 'interpreter and the LSP client')
    return
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  local c, starting
  for _, cl in ipairs(buf_clients(bufnr)) do
    if cl.name == 'hotline' then
      c = cl
    end
  end
  local id = hotline.state.client_id
  if not c and id and vim.lsp.buf_is_attached(bufnr, id) then
    -- 0.7 lists a client for a buffer only once the server has answered
    -- initialize
    c, starting = vim.lsp.get_client_by_id(id), true
  end
  if c and not c:is_stopped() then
    r.ok(string.format('hotline LSP client %d %s %s (root %s)', c.id,
      starting and 'starting for' or 'attached to', name, tostring(c.config.root_dir)))
  elseif c then
    r.error('the hotline LSP client of ' .. name .. ' has stopped',
      { 'See :LspLog for why the server exited, fix it, then reopen the file (:edit).' })
  elseif vim.bo[bufnr].filetype == 'python' then
    r.error('no hotline LSP client attached to ' .. name,
      { "Call require('hotline').setup() before opening Python files (or run :edit) and fix "
        .. 'any error above.' })
  else
    r.info('the buffer ' .. (name ~= '' and name or bufnr) .. ' is not a Python file: no client '
      .. 'expected there')
  end
end

local function report_options(r, opts)
  local keys = { 'cmd', 'python', 'args', 'root_markers', 'settings', 'hints', 'lenses', 'executing',
    'sign_text' }
  for _, k in ipairs(keys) do
    r.info(k .. ' = ' .. inspect1(opts[k]))
  end
end

function M.check()
  local r = reporter()
  local v = vim.version()
  r.start('hotline: setup and server')
  r.info(string.format('Neovim %d.%d.%d', v.major, v.minor, v.patch))
  local opts = check_setup(r)
  local _, adir = check_binary(r, opts)

  local bufnr = source_buffer()
  local path = bufnr and vim.api.nvim_buf_get_name(bufnr) or ''
  local root = path ~= '' and hotline.find_root(path, opts.root_markers) or vim.fn.getcwd()
  r.start('hotline: Python for ' .. (path ~= '' and path or 'the current folder') .. ' (root ' .. root .. ')')
  check_python(r, opts, root, adir)

  r.start('hotline: LSP client')
  check_client(r, bufnr)

  r.start('hotline: options')
  report_options(r, opts)
end

return M
