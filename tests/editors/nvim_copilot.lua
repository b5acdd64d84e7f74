-- Headless Neovim 0.11 driver for tests/editors/test_neovim_copilot.py: `flowedit lsp` as the LSP server of
-- Copilot's next-edit clients. Configured as docs/editors.md says (vim.lsp.config + vim.lsp.enable, a
-- client name holding "copilot"), then what sidekick.nvim does (lua/sidekick/nes/init.lua): pick the
-- client whose name holds "copilot", ask textDocument/copilotInlineEdit at the cursor for the buffer's
-- version, keep the edits of that version, draw them with extmarks, say didShowInlineEdit (copilot-lsp's
-- {item = {command}}), apply them with vim.lsp.util.apply_text_edits and run each edit's command with
-- client:exec_cmd.
--
-- Usage: nvim --headless --clean -u tests/editors/nvim_copilot.lua file.py   (env: see nvim_driver.lua)
-- Exit: 0 = the driver got through (the test judges the outcome), 1 = the driver itself failed.

local driver = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_driver.lua')
local say, summary = driver.say, driver.summary
local ns = vim.api.nvim_create_namespace('copilot_nes_test')

local function fail(what) driver.fail(what); driver.finish() end

local cmd = vim.fn.json_decode(os.getenv('FLOWEDIT_NVIM_SERVER_CMD'))
cmd = vim.list_extend({ '/bin/sh', '-c', 'exec "$@" 2>>"$FLOWEDIT_NVIM_SERVER_LOG"', 'sh' }, cmd)
vim.lsp.config('copilot_flowedit', { cmd = cmd, filetypes = { 'python' }, root_dir = vim.fn.getcwd() })
vim.lsp.enable('copilot_flowedit')

local function copilot_client(buf) -- sidekick's Config.get_client: the first client whose name holds "copilot"
  return vim.tbl_filter(function(c) return c.name:lower():find('copilot') end, vim.lsp.get_clients({ bufnr = buf }))[1]
end

local function ask(client, buf, handler)
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  params.textDocument.version = vim.lsp.util.buf_versions[buf]
  client:request('textDocument/copilotInlineEdit', params, handler, buf)
end

local function draw(client, buf, edit) -- the replaced text highlighted, the new text inline after it
  local function col(p)
    local line = vim.api.nvim_buf_get_lines(buf, p.line, p.line + 1, false)[1] or ''
    return vim.str_byteindex(line, client.offset_encoding, p.character, false)
  end
  local s, e = edit.range.start, edit.range['end']
  vim.api.nvim_buf_set_extmark(buf, ns, s.line, col(s), { end_row = e.line, end_col = col(e), hl_group = 'DiffDelete' })
  local lines = vim.split(edit.text, '\n', { plain = true }) -- its first line inline, the others below
  vim.api.nvim_buf_set_extmark(buf, ns, e.line, col(e), { virt_text = { { lines[1], 'DiffAdd' } },
    virt_text_pos = 'inline', virt_lines = #lines > 1 and vim.tbl_map(function(l) return { { l, 'DiffAdd' } } end,
      vim.list_slice(lines, 2)) or nil })
  summary.extmarks = vim.api.nvim_buf_get_extmarks(buf, ns, 0, -1, { details = true })
end

local function accept(client, buf, edits)
  vim.lsp.util.apply_text_edits(vim.tbl_map(function(e) return { range = e.range, newText = e.text } end, edits),
    buf, client.offset_encoding)
  vim.api.nvim_buf_clear_namespace(buf, ns, 0, -1)
  for _, e in ipairs(edits) do client:exec_cmd(e.command, { bufnr = buf }) end
  client:request('workspace/executeCommand', { command = 'flowedit.stats', arguments = { {} } }, function(err, res)
    if err then return fail('flowedit.stats: ' .. vim.inspect(err)) end
    summary.counters = res.next_edits
    driver.finish()
  end, buf)
end

vim.defer_fn(function()
  local buf = vim.api.nvim_get_current_buf()
  local ok = vim.wait(15000, function() local c = copilot_client(buf); return c ~= nil and c.initialized end, 10)
  if not ok then return fail('no copilot client attached within 15 s') end
  local client = copilot_client(buf)
  summary.client_name, summary.offset_encoding = client.name, client.offset_encoding
  -- the user renames the first `width` (the buffer's line 1, 0-based 0) to `size`, the cursor after it
  local line = vim.api.nvim_buf_get_lines(buf, 0, 1, false)[1]
  local at = line:find('width', 1, true) - 1
  vim.api.nvim_buf_set_text(buf, 0, at, 0, at + 5, { 'size' })
  vim.api.nvim_win_set_cursor(0, { 1, at + 4 })
  ask(client, buf, function(err, res)
    if err then return fail('copilotInlineEdit: ' .. vim.inspect(err)) end
    summary.answer = res
    local edits = vim.tbl_filter(function(e)
      return e.textDocument.version == vim.lsp.util.buf_versions[buf] end, res.edits or {})
    if #edits == 0 then return fail('no edit for version ' .. tostring(vim.lsp.util.buf_versions[buf])) end
    draw(client, buf, edits[1])
    client:notify('textDocument/didShowInlineEdit', { item = { command = edits[1].command } })
    vim.schedule(function() accept(client, buf, edits) end)
  end)
end, 0)
