-- Headless Neovim driver for tests/editors/test_neovim_completion.py: a real Neovim inserts the
-- `textDocument/completion` fallback item of `flowedit lsp` through its own UI path, then accepts it from
-- the popup (<C-y>). Two paths:
--   omnifunc        omnifunc = vim.lsp.omnifunc, <C-x><C-o> in insert mode (0.7+)
--   lsp.completion  vim.lsp.completion.enable() on the buffer, vim.lsp.completion.get() in insert mode
--                   (0.11+: on accept it expands a snippet item and runs the item's command)
--
-- Usage: nvim --headless --clean -u tests/editors/nvim_complete.lua file.py
-- Env (set by the test), besides those of nvim_driver.lua:
--   FLOWEDIT_NVIM_AFTER        the cursor goes right after the first occurrence of this text (insert mode)
--   FLOWEDIT_NVIM_COMPLETEOPT  'completeopt' to use (optional; Neovim's default otherwise)
--   FLOWEDIT_NVIM_COMPLETION   the path: omnifunc (default) or lsp.completion
-- Exit: 0 = the driver got through (the test judges the outcome), 1 = the driver itself failed.
--
-- Keys given to nvim_feedkeys are only processed once Lua returns to the main loop, so every step after
-- a feedkeys continues in a deferred callback.

local driver = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_driver.lua')
local ms, say, env = driver.ms, driver.say, driver.env
vim.o.showmode = false -- no "-- INSERT --" on stdout

local function keys(s) return vim.api.nvim_replace_termcodes(s, true, false, true) end
local function feed(s) vim.api.nvim_feedkeys(keys(s), 'nt', false) end

local summary = driver.summary
summary.steps = {}
local statuses = {}

local function step(name, extra)
  local e = { name = name, ms = math.floor(ms() + 0.5), mode = vim.api.nvim_get_mode().mode,
    line = vim.api.nvim_get_current_line(), cursor = vim.api.nvim_win_get_cursor(0) }
  for k, v in pairs(extra or {}) do e[k] = v end
  table.insert(summary.steps, e)
  say('%s: mode=%s line=%q %s', name, e.mode, e.line, extra and vim.inspect(extra, { newline = ' ', indent = '' }) or '')
end

local function latest_counters()
  for i = #statuses, 1, -1 do
    local c = type(statuses[i]) == 'table' and statuses[i].completion or nil
    if type(c) == 'table' then return c end
  end
end

local function finish()
  summary.counters = latest_counters()
  summary.statuses = #statuses
  driver.finish()
end

-- the steps run in deferred callbacks: an error ends the run at once
local function fail(what)
  driver.fail(what)
  finish()
end

-- run `fn` later on the main loop; any error ends the run
local function later(delay, fn)
  vim.defer_fn(function()
    local ok, err = pcall(fn)
    if not ok then fail(tostring(err)) end
  end, delay)
end

-- poll `cond` every 10 ms until it holds (then `fn`) or `timeout` ms passed (then fail with `what`)
local function when(cond, timeout, what, fn)
  local deadline = ms() + timeout
  local function poll()
    if cond() then return fn() end
    if ms() > deadline then return fail('timed out waiting for ' .. what) end
    later(10, poll)
  end
  later(0, poll)
end

local function complete_info()
  return vim.fn.complete_info({ 'mode', 'pum_visible', 'items', 'selected' })
end

local function plain_items(info)
  local out = {}
  for _, it in ipairs(info.items or {}) do table.insert(out, { word = it.word, abbr = it.abbr }) end
  return out
end

local function main()
  local bufnr = vim.api.nvim_get_current_buf()
  local after = assert(os.getenv('FLOWEDIT_NVIM_AFTER'), 'FLOWEDIT_NVIM_AFTER unset')
  local completeopt = env('FLOWEDIT_NVIM_COMPLETEOPT', nil)
  if completeopt then vim.o.completeopt = completeopt end
  summary.completeopt = vim.o.completeopt

  local completed = {}
  vim.api.nvim_create_autocmd('CompleteDone', { callback = function()
    -- (it also fires, with an empty item, when the omnifunc returns -2 to wait for the server)
    local item = vim.v.completed_item or {}
    if item.word ~= nil then table.insert(completed, { word = item.word, abbr = item.abbr }) end
  end })
  summary.completed = completed

  local client, problem = driver.start_client(bufnr, {
    ['flowedit/status'] = function(err, params, ctx) table.insert(statuses, params) end,
  })
  if not client then return fail(problem) end

  -- What Neovim sends and receives for textDocument/completion: every path ends in the client's request
  -- method (0.7: client.request(...), 0.11: client:request(...)), so a wrapper on this client sees it all.
  summary.requests = {}
  local function watched(method, params, handler)
    if method ~= 'textDocument/completion' then return handler end
    local rec = { sent_ms = math.floor(ms() + 0.5), params = params }
    table.insert(summary.requests, rec)
    say('-> textDocument/completion %s', vim.fn.json_encode(params))
    return function(err, result, ...)
      rec.answered_ms, rec.err, rec.result = math.floor(ms() + 0.5), err, result
      say('<- textDocument/completion (%d ms) err=%s result=%s', rec.answered_ms - rec.sent_ms,
        vim.inspect(err), vim.fn.json_encode(result == nil and vim.NIL or result))
      if handler then return handler(err, result, ...) end
    end
  end
  local orig_request = client.request
  if driver.NEW then
    client.request = function(self, method, params, handler, ...)
      return orig_request(self, method, params, watched(method, params, handler), ...)
    end
  else
    client.request = function(method, params, handler, ...)
      return orig_request(method, params, watched(method, params, handler), ...)
    end
  end

  local path = env('FLOWEDIT_NVIM_COMPLETION', 'omnifunc')
  summary.path = path
  local trigger
  if path == 'omnifunc' then
    vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
    trigger = '<C-x><C-o>'
  elseif path == 'lsp.completion' then
    if not vim.lsp.completion then return fail('this Neovim has no vim.lsp.completion') end
    vim.lsp.completion.enable(true, client.id, bufnr)
    trigger = '<Cmd>lua vim.lsp.completion.get()<CR>'
  else
    return fail('unknown FLOWEDIT_NVIM_COMPLETION ' .. path)
  end

  -- the cursor right after `after`: in normal mode on the character that follows it, then `i` (or `A`
  -- when `after` ends its line)
  local row, s, at_end
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    s = string.find(line, after, 1, true)
    if s then row, at_end = i, s - 1 + #after == #line; break end
  end
  if not row then return fail('text ' .. after .. ' not in the buffer') end
  vim.api.nvim_win_set_cursor(0, { row, s - 1 + #after })
  step('before')
  local t_keys = ms()
  feed((at_end and 'A' or 'i') .. trigger)

  -- 1) the popup (or the single match) has our item
  when(function() return #(complete_info().items or {}) > 0 end, 10000, 'completion items', function()
    local info = complete_info()
    summary.popup = { items = plain_items(info), selected = info.selected, pum_visible = info.pum_visible,
      mode = info.mode, after_keys_ms = math.floor(ms() - t_keys + 0.5) }
    step('items shown', { popup = summary.popup })
    -- 2) accept: select the first item if nothing is selected yet, then <C-y>
    summary.accept_keys = (info.selected == -1) and '<C-n><C-y>' or '<C-y>'
    feed(summary.accept_keys)
    later(50, function()
      local info2 = complete_info()
      step('accepted', { completion_mode = info2.mode, pum_visible = info2.pum_visible })
      summary.accepted_line = vim.api.nvim_get_current_line()
      -- 3) back to normal mode
      feed('<Esc>')
      when(function() return vim.api.nvim_get_mode().mode == 'n' end, 5000, 'normal mode', function()
        step('normal mode')
        -- the counters come with the flowedit/status the server sends when a completion request ends
        vim.wait(2000, function()
          local c = latest_counters(); return c ~= nil and (c.requests or 0) >= #summary.requests
        end, 10)
        finish()
      end)
    end)
  end)
end

vim.api.nvim_create_autocmd('VimEnter', { once = true, callback = function()
  local ok, err = pcall(main)
  if not ok then fail(tostring(err)) end
end })
