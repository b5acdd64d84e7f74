-- flowedit's next-edit suggestions in Neovim: the server's `flowedit/nextEdit` drawn as virtual text (the
-- text it replaces struck through, the new text beside it), <Tab> in normal mode to jump to it and <Tab>
-- again to accept it, <Esc> to dismiss it — both keys mapped only while a next edit is shown. The cursor's
-- line goes to the server as `flowedit/cursor` when it changes (leaving the edited line predicts at once).
-- Used by flowedit/init.lua; Neovim 0.7.2 and later (before 0.10 the new text shows at the end of the line).

local M = {}

local api, fn, lsp = vim.api, vim.fn, vim.lsp
local util = lsp.util
local INLINE = fn.has('nvim-0.10') == 1
local ns = api.nvim_create_namespace('flowedit_next_edit')
local shown = {} -- bufnr -> { id, edits, client_id }
local keys = {} -- set by setup: { accept = '<Tab>', dismiss = '<Esc>' }
local execute -- set by setup: init.lua's execute(bufnr, command, arguments, on_result)

local function byte_col(bufnr, pos, encoding)
  if util._get_line_byte_from_position then return util._get_line_byte_from_position(bufnr, pos, encoding) end
  return pos.character
end

local function highlights()
  pcall(api.nvim_set_hl, 0, 'FlowEditNextEditOld', { default = true, strikethrough = true, fg = '#d16969' })
  pcall(api.nvim_set_hl, 0, 'FlowEditNextEditNew', { default = true, fg = '#6a9955', italic = true })
end

local function map(bufnr, on)
  for name, action in pairs({ accept = function() M.tab(bufnr) end, dismiss = function() M.dismiss(bufnr) end }) do
    local key = keys[name]
    if key and key ~= '' and api.nvim_buf_is_valid(bufnr) then
      if on then
        vim.keymap.set('n', key, action, { buffer = bufnr, nowait = true, desc = 'FlowEdit: next edit ' .. name })
      else
        pcall(vim.keymap.del, 'n', key, { buffer = bufnr })
      end
    end
  end
end

local function clear(bufnr)
  if api.nvim_buf_is_valid(bufnr) then api.nvim_buf_clear_namespace(bufnr, ns, 0, -1) end
  if shown[bufnr] then map(bufnr, false) end
  shown[bufnr] = nil
end

local function draw(bufnr, edit, encoding)
  local s, e = edit.range.start, edit.range['end']
  local s_col, e_col = byte_col(bufnr, s, encoding), byte_col(bufnr, e, encoding)
  if edit.oldText ~= '' then
    api.nvim_buf_set_extmark(bufnr, ns, s.line, s_col, { end_row = e.line, end_col = e_col,
      hl_group = 'FlowEditNextEditOld' })
  end
  if edit.newText == '' then return end
  local lines = vim.split(edit.newText, '\n', { plain = true })
  if lines[#lines] == '' and #lines > 1 then table.remove(lines) end -- (a whole new line: no empty one after it)
  local first = table.remove(lines, 1)
  local virt_lines = {}
  for _, line in ipairs(lines) do virt_lines[#virt_lines + 1] = { { line, 'FlowEditNextEditNew' } } end
  local opts = { virt_lines = #virt_lines > 0 and virt_lines or nil, hl_mode = 'combine' }
  if first ~= '' then
    opts.virt_text = { { INLINE and first or ('→ ' .. first), 'FlowEditNextEditNew' } }
    opts.virt_text_pos = INLINE and 'inline' or 'eol'
  end
  if s.line == e.line and edit.oldText == '' and edit.newText:sub(-1) == '\n' and e.character == 0 and s.line > 0 then
    -- whole lines inserted before line s: shown under the line above, where they will go
    local above = api.nvim_buf_get_lines(bufnr, s.line - 1, s.line, false)[1] or ''
    opts.virt_text, opts.virt_text_pos = nil, nil
    table.insert(virt_lines, 1, { { first, 'FlowEditNextEditNew' } })
    opts.virt_lines = virt_lines
    api.nvim_buf_set_extmark(bufnr, ns, s.line - 1, #above, opts)
    return
  end
  api.nvim_buf_set_extmark(bufnr, ns, e.line, e_col, opts)
end

--- `flowedit/nextEdit`: show the prediction (or clear it: `edits` empty)
function M.handler(_, params, ctx)
  if type(params) ~= 'table' or type(params.uri) ~= 'string' then return end
  local bufnr = vim.uri_to_bufnr(params.uri)
  if not api.nvim_buf_is_loaded(bufnr) then return end
  clear(bufnr)
  local edits = params.edits or {}
  if #edits == 0 then return end
  if params.version and params.version ~= vim.NIL then
    local version = util.buf_versions[bufnr] or api.nvim_buf_get_changedtick(bufnr)
    if version ~= params.version then return end -- the buffer moved on: a newer one is coming
  end
  local client = lsp.get_client_by_id(ctx.client_id)
  local encoding = client and client.offset_encoding or 'utf-16'
  for _, edit in ipairs(edits) do pcall(draw, bufnr, edit, encoding) end
  shown[bufnr] = { id = params.id, edits = edits, client_id = ctx.client_id }
  map(bufnr, true)
end

--- The next edit shown in `bufnr` ({ id, edits }) or nil: for tests and statuslines.
function M.shown(bufnr)
  return shown[bufnr or api.nvim_get_current_buf()]
end

--- <Tab>: to the next edit's line first, then accept it.
function M.tab(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  local now = shown[bufnr]
  if not now then return end
  local first = now.edits[1].range.start
  local row = api.nvim_win_get_cursor(0)[1] - 1
  if row ~= first.line then
    local client = lsp.get_client_by_id(now.client_id)
    local col = byte_col(bufnr, first, client and client.offset_encoding or 'utf-16')
    pcall(api.nvim_win_set_cursor, 0, { first.line + 1, col })
    return
  end
  M.accept(bufnr)
end

function M.accept(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  local now = shown[bufnr]
  if not now then return end
  execute(bufnr, 'flowedit.acceptNextEdit', { uri = vim.uri_from_bufnr(bufnr), id = now.id })
end

function M.dismiss(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  local now = shown[bufnr]
  if not now then return end
  clear(bufnr)
  execute(bufnr, 'flowedit.dismissNextEdit', { uri = vim.uri_from_bufnr(bufnr), id = now.id })
end

--- Tell the server where the cursor is whenever its line changes (`notify(client, method, params)`).
function M.attach(client, bufnr, notify, position)
  local group = api.nvim_create_augroup('flowedit_next_edit_' .. bufnr, { clear = true })
  local last_row
  api.nvim_create_autocmd({ 'CursorMoved', 'CursorMovedI' }, { group = group, buffer = bufnr, callback = function()
    local c = api.nvim_win_get_cursor(0)
    if c[1] == last_row then return end
    last_row = c[1]
    notify(client, 'flowedit/cursor', { uri = vim.uri_from_bufnr(bufnr),
      position = position(bufnr, c[1] - 1, c[2], client.offset_encoding or 'utf-16') })
  end })
  api.nvim_create_autocmd('BufUnload', { group = group, buffer = bufnr, callback = function() shown[bufnr] = nil end })
end

function M.setup(config_keys, run)
  keys = { accept = config_keys.next_edit_accept, dismiss = config_keys.next_edit_dismiss }
  execute = run
  highlights()
end

return M
