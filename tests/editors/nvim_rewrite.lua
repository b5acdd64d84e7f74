-- Headless Neovim driver for tests/editors/test_neovim.py: a real Neovim LSP client runs the
-- "Rewrite selection…" code action of `flowedit lsp` and watches the answer stream into the buffer.
--
-- Usage: nvim --headless --clean -u tests/editors/nvim_rewrite.lua file.py
-- Env (set by the test), besides those of nvim_driver.lua:
--   FLOWEDIT_NVIM_TARGET      the text to select (first occurrence, ASCII)
--   FLOWEDIT_NVIM_TYPE_LINES  how many lines to type above the region while it streams (default 0)
-- Exit: 0 = the driver got an outcome (the test judges it), 1 = the driver itself failed (:cquit 1).

local driver = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_driver.lua')
local ms, say, env, fail, finish = driver.ms, driver.say, driver.env, driver.fail, driver.finish
local summary = driver.summary

-- NB: the -u script runs before the argument file is loaded, so all the work happens on VimEnter.
local function main()
  local bufnr = vim.api.nvim_get_current_buf()
  local target = assert(os.getenv('FLOWEDIT_NVIM_TARGET'), 'FLOWEDIT_NVIM_TARGET unset')
  local type_lines = tonumber(env('FLOWEDIT_NVIM_TYPE_LINES', '0'))

  -- server -> client traffic we watch
  local apply_count, apply_refused, skipped_stale = 0, 0, 0
  local apply_ms = {} -- when each applyEdit was handled (ms since the driver started)
  local orig_apply = vim.lsp.handlers['workspace/applyEdit']
  vim.lsp.handlers['workspace/applyEdit'] = function(err, params, ctx, config)
    local r = orig_apply(err, params, ctx, config)
    apply_count = apply_count + 1
    table.insert(apply_ms, math.floor(ms() + 0.5))
    if not (r and r.applied) then apply_refused = apply_refused + 1 end
    return r
  end
  -- Neovim answers `applied: true` even when it skips a TextDocumentEdit whose version is older than
  -- its buffer ("Buffer ... newer than edits."): count those by the buffer not changing.
  local orig_tde = vim.lsp.util.apply_text_document_edit
  vim.lsp.util.apply_text_document_edit = function(tde, ...)
    local b = vim.uri_to_bufnr(tde.textDocument.uri)
    local tick = vim.api.nvim_buf_get_changedtick(b)
    local r = orig_tde(tde, ...)
    if #(tde.edits or {}) > 0 and vim.api.nvim_buf_get_changedtick(b) == tick then
      skipped_stale = skipped_stale + 1
    end
    return r
  end

  local exec_results, statuses = {}, {}
  local handlers = {
    ['workspace/executeCommand'] = function(err, result, ctx)
      table.insert(exec_results, { err = err, result = result })
    end,
    ['flowedit/status'] = function(err, params, ctx)
      table.insert(statuses, params)
    end,
  }

  -- the code action picker: choose "Rewrite selection…" like a user would
  local offered, picked
  vim.ui.select = function(items, opts, on_choice)
    offered = {}
    local choice
    for _, it in ipairs(items) do
      -- 0.7: item = {client_id, action}; 0.10+: item = {action = ..., ctx = ...}
      local action = it.action or it[2]
      table.insert(offered, action.title)
      if action.title == 'Rewrite selection…' and not choice then choice = it end
    end
    picked = choice and 'Rewrite selection…' or nil
    on_choice(choice)
  end

  local client, problem = driver.start_client(bufnr, handlers)
  if not client then return fail(problem) end

  -- Type above the region right after Neovim sent a didChange (the echo of an applied edit, after its
  -- 150 ms debounce): the server's next edit is then built against a version the buffer has already
  -- left, which Neovim 0.7 skips silently while answering `applied: true`.
  local typed, typed_during_stream, did_change_sent = {}, 0, 0
  local outcome -- the status `request` that ends our rewrite
  local function type_line()
    local line = string.format('# typed %d é😀', #typed + 1)
    vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { line })
    table.insert(typed, line)
    if not outcome then typed_during_stream = typed_during_stream + 1 end
  end
  local orig_notify = client.notify
  local function on_notify(method)
    if method == 'textDocument/didChange' then
      did_change_sent = did_change_sent + 1
      if apply_count >= 1 and #typed < type_lines and not outcome then vim.schedule(type_line) end
    end
  end
  if driver.NEW then
    client.notify = function(self, method, ...) on_notify(method); return orig_notify(self, method, ...) end
  else
    client.notify = function(method, ...) on_notify(method); return orig_notify(method, ...) end
  end

  -- select the target (mark-indexed: 1-based row, 0-based byte column, inclusive end)
  local row, s, e
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    s, e = string.find(line, target, 1, true)
    if s then row = i; break end
  end
  if not row then return fail('target ' .. target .. ' not in the buffer') end
  local initial_lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local t_action = ms()
  if vim.lsp.buf.range_code_action then -- 0.7 .. 0.9
    vim.lsp.buf.range_code_action(nil, { row, s - 1 }, { row, e - 1 })
  else -- 0.10+
    vim.lsp.buf.code_action({ range = { start = { row, s - 1 }, ['end'] = { row, e - 1 } } })
  end
  local declined = function() return offered ~= nil and picked == nil end -- nothing to pick: fail fast
  if not vim.wait(15000, function() return #exec_results >= 1 or declined() end, 5) or declined() then
    summary.offered = offered
    return fail('the code action did not run flowedit.rewrite (offered: ' .. vim.inspect(offered) .. ')')
  end
  summary.offered, summary.picked = offered, picked
  local res = exec_results[1]
  if res.err or type(res.result) ~= 'table' then
    return fail('flowedit.rewrite answered ' .. vim.inspect(res))
  end
  local rid = res.result.id
  summary.rewrite = res.result
  say('flowedit.rewrite -> %s (%.1f ms)', vim.inspect(res.result), ms() - t_action)

  -- Watch the stream: every distinct state of the document below the typed lines is one the user saw.
  local seen, states, last_apply = {}, 0, -1
  local initial_text = table.concat(initial_lines, '\n')
  local function region_text()
    return table.concat(vim.api.nvim_buf_get_lines(bufnr, #typed, -1, false), '\n')
  end
  local function ended()
    for _, st in ipairs(statuses) do
      local req = type(st) == 'table' and st.request or nil
      if type(req) == 'table' and req.id == rid and req.outcome ~= nil and req.outcome ~= vim.NIL then
        return req
      end
    end
  end
  local got = vim.wait(45000, function()
    if apply_count ~= last_apply then
      last_apply = apply_count
      local text = region_text()
      if text ~= initial_text and not seen[text] then seen[text] = true; states = states + 1 end
    end
    outcome = ended()
    return outcome ~= nil
  end, 2)
  local final_text = region_text()
  if seen[final_text] then states = states - 1 end -- the final state is not intermediate
  if not got then fail('no flowedit/status outcome for ' .. tostring(rid) .. ' within 45 s') end
  summary.outcome = outcome and outcome.outcome or nil
  summary.status = outcome
  summary.apply_edits = apply_count
  summary.apply_refused = apply_refused
  summary.action_ms = math.floor(t_action + 0.5)
  summary.apply_ms = apply_ms
  summary.skipped_stale = skipped_stale
  summary.intermediate_states = states
  summary.did_change_sent = did_change_sent
  summary.typed = typed
  summary.typed_during_stream = typed_during_stream
  summary.stream_ms = ms() - t_action
  say('outcome=%s applyEdit=%d (skipped as stale %d) intermediate states=%d typed=%d (%.1f ms)',
    tostring(summary.outcome), apply_count, skipped_stale, states, #typed, summary.stream_ms)
end

vim.api.nvim_create_autocmd('VimEnter', { once = true, callback = function()
  local ok, err = pcall(main)
  if not ok then fail(tostring(err)) end
  local ok2, err2 = pcall(finish)
  if not ok2 then say('ERROR in finish: %s', tostring(err2)); vim.cmd('cquit 2') end
end })
