-- End-to-end test of editors/nvim in a real headless Neovim: loads the
-- plugin, opens the test project's app/main.py, runs :HotlineRun, and checks
-- what a user sees: the executing sign + library-call text on the long line
-- while it runs (the server's text), the run's end (hotline/runEnded), then
-- lenses, diagnostics (hot line; the leak Warning on
-- remember()'s append line) and hint text on the right lines, in words
-- (the sleep line "N% waiting", the hot loop "N% python" or "· N py ..."),
-- :HotlineShow's report and :HotlineClear removing it all.
-- Environment: HOTLINE_BIN (the server), HOTLINE_PLUGIN (editors/nvim),
-- HOTLINE_PROJECT (a writable copy of tests/editors/project).
-- Exits 0 on success, 1 on the first failed check (cquit).
local plugin = assert(os.getenv('HOTLINE_PLUGIN'), 'HOTLINE_PLUGIN')
local bin = assert(os.getenv('HOTLINE_BIN'), 'HOTLINE_BIN')
local project = assert(os.getenv('HOTLINE_PROJECT'), 'HOTLINE_PROJECT')
local timeout = tonumber(os.getenv('HOTLINE_E2E_TIMEOUT_MS') or '') or 30000

local function log(msg)
  io.stderr:write('[nvim-e2e] ' .. msg .. '\n')
end

local function fail(msg)
  log('FAIL: ' .. msg)
  vim.cmd('cquit 1')
end

local function wait(what, pred, ms)
  local ok = vim.wait(ms or timeout, function()
    local good, res = pcall(pred)
    return good and res
  end, 50)
  if not ok then
    fail('timed out waiting for ' .. what)
  end
  log('ok: ' .. what)
end

local ok, err = pcall(function()
  vim.opt.runtimepath:prepend(plugin)
  vim.cmd('filetype on')
  local hotline = require('hotline')
  hotline.setup({
    cmd = { bin, 'lsp' },
    settings = { diagnostics = { hotLines = 2 }, hints = { threshold = 1 } },
  })
  log('neovim ' .. tostring(vim.version().major) .. '.' .. tostring(vim.version().minor) .. '.'
    .. tostring(vim.version().patch))
  vim.cmd('edit ' .. vim.fn.fnameescape(project .. '/app/main.py'))
  local buf = vim.api.nvim_get_current_buf()
  local function line_of(pat)
    for i, l in ipairs(vim.api.nvim_buf_get_lines(buf, 0, -1, false)) do
      if l:find(pat, 1, true) then
        return i - 1
      end
    end
    error('no line ' .. pat)
  end
  local l_def = line_of('def hot(')
  local l_loop = line_of('total += (i * i) % 7')
  local l_spin = line_of('slowlib.spin(seconds, remember)')
  local l_leak = line_of('kept.append(bytearray(1 << 20))')
  local l_sleep = line_of('time.sleep(0.4)')

  wait('the server attached', function()
    local id = hotline.state.client_id
    return id and vim.lsp.buf_is_attached(buf, id)
  end)

  vim.cmd('HotlineRun 3')

  local function exec_sign_line()
    local placed = vim.fn.sign_getplaced(buf, { group = 'hotline' })[1].signs
    return placed[1] and placed[1].lnum - 1 or nil
  end
  wait('executing sign on the library-call line', function()
    return exec_sign_line() == l_spin
  end)
  -- the text is the server's (hotline/executing "text"), shown as sent
  wait('executing text names slowlib.spin, as the server wrote it', function()
    local marks = vim.api.nvim_buf_get_extmarks(buf, hotline.state.ns_exec, 0, -1, { details = true })
    local exec = hotline.state.exec
    for _, m in ipairs(marks) do
      local vt = m[4].virt_text
      if m[2] == l_spin and vt and vt[1][1]:find('slowlib.spin', 1, true) and vt[1][1]:find('^▶ %d')
        and exec and vt[1][1] == exec.text and exec.call == 'slowlib.spin' then
        return true
      end
    end
  end)
  -- the end of the run is the documented hotline/runEnded, with its outcome
  wait('the run ended (hotline/runEnded, outcome done)', function()
    return hotline.state.runs_ended >= 1 and hotline.state.last_outcome == 'done'
  end)
  wait('the executing sign is gone', function()
    return exec_sign_line() == nil
  end)

  wait('a lens over def hot()', function()
    for _, l in ipairs(vim.lsp.codelens.get(buf)) do
      if l.range.start.line == l_def and l.command and l.command.title:find('⏱', 1, true) then
        log('lens over def hot(): ' .. l.command.title)
        -- in words, no "sys 0" noise
        return l.command.title:find('^⏱ %d+%% ') ~= nil and l.command.title:find('sys', 1, true) == nil
      end
    end
  end)

  -- the hint text shown at the end of line (virtual text on 0.7), or nil
  local function hint_text(line)
    if vim.lsp.inlay_hint and vim.lsp.inlay_hint.get then
      for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = buf })) do
        if h.inlay_hint.position.line == line then
          local label = h.inlay_hint.label
          if type(label) == 'table' then
            local parts = {}
            for _, p in ipairs(label) do
              parts[#parts + 1] = p.value
            end
            label = table.concat(parts)
          end
          return label
        end
      end
      return nil
    end
    local marks = vim.api.nvim_buf_get_extmarks(buf, hotline.state.ns_hint, { line, 0 }, { line, -1 },
      { details = true })
    local text = marks[1] ~= nil and marks[1][4].virt_text[1][1] or nil
    return text and text:find('%%') and text or nil
  end
  local function hint_on(line)
    return hint_text(line) ~= nil
  end
  wait('a hint on the hot loop line', function()
    return hint_on(l_loop)
  end)
  wait('a hint on the library-call line', function()
    return hint_on(l_spin)
  end)
  -- hints read on their own: the share, then its kinds in words
  -- (a loaded machine can charge the sleep line some python too: then
  -- "N% · N py · N waiting")
  wait('"waiting" in the sleep line\'s hint', function()
    local t = hint_text(l_sleep) or ''
    return t:find('%d+%% waiting') ~= nil or t:find('· %d+ waiting') ~= nil
  end)
  local loop = hint_text(l_loop) or ''
  if not (loop:find('%d+%% python') or loop:find('%d+%% · %d+ py')) then
    fail('hot loop hint not in words: ' .. loop)
  end
  for _, l in ipairs({ l_loop, l_sleep, l_spin }) do
    log('hint on line ' .. (l + 1) .. ':' .. (hint_text(l) or ''))
  end
  wait('a hot-line diagnostic on the library-call line', function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.lnum == l_spin and d.source == 'hotline' and d.message:find('hot line') then
        return true
      end
    end
  end)
  wait('a leak warning on the line that keeps 1 MB per call', function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.lnum == l_leak and d.source == 'hotline' and d.severity == vim.diagnostic.severity.WARN
        and d.message:find('^likely leak: memory grows [%d.]+ MB/s here') then
        return true
      end
    end
  end)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.severity == vim.diagnostic.severity.WARN and d.lnum ~= l_leak then
      fail('unexpected warning on line ' .. (d.lnum + 1) .. ': ' .. d.message)
    end
  end
  -- no hint on a line that did no work
  if hint_on(l_def - 1) then
    fail('unexpected hint on line ' .. l_def)
  end

  -- :HotlineShow opens the text report in a scratch split
  vim.cmd('HotlineShow')
  wait(':HotlineShow shows the report', function()
    local b = vim.api.nvim_get_current_buf()
    local text = table.concat(vim.api.nvim_buf_get_lines(b, 0, -1, false), '\n')
    return b ~= buf and vim.bo[b].buftype == 'nofile' and text:find('hot', 1, true) ~= nil
  end)
  vim.cmd('close')
  -- :HotlineClear removes lenses, hints and diagnostics
  vim.cmd('HotlineClear')
  wait(':HotlineClear clears lenses, hints and diagnostics', function()
    return #vim.lsp.codelens.get(buf) == 0 and not hint_on(l_loop) and #vim.diagnostic.get(buf) == 0
  end)
  log('PASS')
end)
if not ok then
  fail(tostring(err))
end
vim.cmd('qall!')
