-- flowedit for Neovim: starts `flowedit lsp` for your buffers and adds what plain LSP lacks — rewrite with an
-- instruction (:FlowEditRewrite), interrupt (:FlowEditInterrupt, <Esc> while a rewrite streams), redirect,
-- revert, streamed edits as one undo step and without a message each, reviews (:FlowEditReview: findings
-- as diagnostics, their fixes as code actions), ghost text (0.10+), the completion fallback, next-edit
-- suggestions (flowedit/nextedit.lua), and a statusline component. No dependencies;
-- Neovim 0.7.2 and later (docs/editors.md).
--
--   require("flowedit").setup({ init_options = { endpoint = "wss://api.openai.com/v1/responses" } })
--
-- The server sends a rewrite's edits as `flowedit/applyRewriteEdit` (this plugin declares
-- `experimental.flowedit.rewriteEdits`): each is checked against the buffer's version (a stale one is
-- answered `applied: false`, never applied), applied without a message, and joined to the rewrite's undo
-- step when nothing else changed the buffer since its previous edit.

local M = {}

local nextedit = require('flowedit.nextedit')
local api, fn, lsp = vim.api, vim.fn, vim.lsp
local util = lsp.util
local NEW = fn.has('nvim-0.11') == 1 -- client:method() API
local GHOST = fn.has('nvim-0.10') == 1 -- inline virtual text
local NAME = 'flowedit'

M.defaults = {
  cmd = { 'flowedit', 'lsp' },
  -- the filetypes flowedit attaches to; '*' for every buffer that has a file
  filetypes = { 'python', 'lua', 'javascript', 'javascriptreact', 'typescript', 'typescriptreact', 'go',
    'rust', 'c', 'cpp', 'java', 'kotlin', 'ruby', 'php', 'sh', 'bash', 'zsh', 'html', 'css', 'json', 'yaml',
    'toml', 'markdown', 'sql', 'swift', 'scala', 'elixir', 'haskell', 'ocaml', 'zig', 'vim', 'cs' },
  root_markers = { '.git', 'pyproject.toml', 'package.json', 'Cargo.toml', 'go.mod' },
  init_options = {}, -- flowedit's settings: endpoint, model, api_key_env, exclude, ... (README)
  ghost_text = true, -- 0.10+: inline completions as virtual text at the cursor
  ghost_text_delay_ms = 0, -- wait after a keystroke before asking (the server already answers fast)
  completion = true, -- the completion fallback: omnifunc (0.7+) and vim.lsp.completion (0.11+)
  keys = {
    accept = '<Tab>', -- insert mode, while ghost text shows (else the key does what it did)
    dismiss = '<C-]>', -- insert mode, while ghost text shows
    interrupt = '<Esc>', -- normal mode, buffer-local, only while a rewrite streams in that buffer
    next_edit_accept = '<Tab>', -- normal mode, only while a next edit shows: jump to it, then accept it
    next_edit_dismiss = '<Esc>', -- normal mode, only while a next edit shows (a streaming rewrite's <Esc> wins)
  },
}

M.config = vim.deepcopy(M.defaults)

-- the state the statusline shows: per client id
local status = {} -- last flowedit/status params
local progress = {} -- last $/progress message: { title, message, done }
local running = {} -- bufnr -> id of the rewrite streaming there
local last_rewrite = {} -- bufnr -> id of the last rewrite started there
local groups = {} -- rewrite id -> { bufnr, tick }: the buffer's changedtick after its last edit
local figures = { order = {} } -- rewrite id -> its last figures (flowedit/status `request`), the latest 50
local reviews = { order = {} } -- review id -> its last figures (flowedit/status `review`), the latest 50
local last_review = {} -- bufnr -> id of the last review started there

-- ----------------------------------------------------------------------------------- small helpers
local function client_of(bufnr)
  local get = lsp.get_clients or lsp.get_active_clients
  for _, c in pairs(get({ name = NAME, bufnr = bufnr })) do -- (0.7 takes no filter)
    if c.name == NAME and lsp.buf_is_attached(bufnr, c.id) then return c end
  end
end

local function request(client, method, params, handler, bufnr)
  if NEW then return client:request(method, params, handler, bufnr) end
  return client.request(method, params, handler, bufnr)
end

local function notify(client, method, params)
  if NEW then return client:notify(method, params) end
  return client.notify(method, params)
end

local function say(msg, level)
  vim.schedule(function() vim.notify('FlowEdit: ' .. msg, level or vim.log.levels.INFO) end)
end

local function version_of(bufnr)
  return util.buf_versions[bufnr] or api.nvim_buf_get_changedtick(bufnr)
end

-- the LSP character of byte column `byte` (0-based) of `line` in `encoding`
local function lsp_column(line, byte, encoding)
  if encoding == 'utf-8' then return byte end
  local units = 0
  for i = 1, math.min(byte, #line) do
    local b = line:byte(i)
    if b < 0x80 or b >= 0xC0 then units = units + 1 end -- a code point starts here
    if b >= 0xF0 and encoding ~= 'utf-32' then units = units + 1 end -- astral: two UTF-16 units
  end
  return units
end

local function position(bufnr, row, byte, encoding) -- row 0-based
  local line = api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
  return { line = row, character = lsp_column(line, byte, encoding) }
end

-- the byte just after the character that starts at byte `col` (0-based) of `line`
local function after_char(line, col)
  local b = line:byte(col + 1)
  if not b then return col end
  return col + (b >= 0xF0 and 4 or b >= 0xE0 and 3 or b >= 0xC0 and 2 or 1)
end

-- the LSP range a command acts on: a charwise visual selection when the range is the last one, the
-- whole lines line1..line2 otherwise (and the cursor's line without a range)
local function command_range(bufnr, opts, encoding)
  local line1, line2 = opts.line1, opts.line2
  if opts.range == 0 then line1, line2 = fn.line('.'), fn.line('.') end
  local s, e = api.nvim_buf_get_mark(bufnr, '<'), api.nvim_buf_get_mark(bufnr, '>')
  if opts.range > 0 and fn.visualmode() == 'v' and s[1] == line1 and e[1] == line2 then
    local last = api.nvim_buf_get_lines(bufnr, e[1] - 1, e[1], false)[1] or ''
    return { start = position(bufnr, s[1] - 1, s[2], encoding),
      ['end'] = position(bufnr, e[1] - 1, math.min(after_char(last, e[2]), #last), encoding) }
  end
  local last = api.nvim_buf_get_lines(bufnr, line2 - 1, line2, false)[1] or ''
  return { start = { line = line1 - 1, character = 0 }, ['end'] = position(bufnr, line2 - 1, #last, encoding) }
end

local function encoding_of(client)
  return client.offset_encoding or 'utf-16'
end

local function execute(bufnr, command, arguments, on_result)
  local client = client_of(bufnr)
  if not client then return say('no flowedit server is attached to this buffer', vim.log.levels.WARN) end
  request(client, 'workspace/executeCommand', { command = command, arguments = { arguments } },
    function(err, result)
      if err then -- (unless the server said it already: a refused rewrite or review)
        if type(err.data) == 'table' and err.data.shown then return end
        return say(command .. ': ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      end
      if on_result then on_result(result, client) end
    end, bufnr)
  return client
end

-- ----------------------------------------------------------------------------------- interrupt key
local function map_interrupt(bufnr, on)
  local key = M.config.keys.interrupt
  if not key or key == '' or not api.nvim_buf_is_valid(bufnr) then return end
  if on then
    vim.keymap.set('n', key, function() M.interrupt(bufnr) end,
      { buffer = bufnr, nowait = true, desc = 'FlowEdit: interrupt the rewrite' })
  else
    pcall(vim.keymap.del, 'n', key, { buffer = bufnr })
  end
end

local function rewrite_ended(bufnr, id)
  if running[bufnr] == id then
    running[bufnr] = nil
    map_interrupt(bufnr, false)
  end
  groups[id] = nil
end

-- ----------------------------------------------------------------------------------- handlers
-- `flowedit/applyRewriteEdit`: workspace/applyEdit's params plus `rewrite` (the rewrite's id)
local function apply_rewrite_edit(_, params, ctx)
  local client = lsp.get_client_by_id(ctx.client_id)
  local changes = params.edit and params.edit.documentChanges or {}
  local tde = changes[1]
  if #changes ~= 1 or not (tde and tde.textDocument and tde.edits) then -- not one document's text edits
    local ok, why = pcall(util.apply_workspace_edit, params.edit, encoding_of(client))
    return { applied = ok, failureReason = not ok and tostring(why) or nil }
  end
  local bufnr = vim.uri_to_bufnr(tde.textDocument.uri)
  if not api.nvim_buf_is_loaded(bufnr) then return { applied = false, failureReason = 'the buffer is not loaded' } end
  local version = tde.textDocument.version
  if version ~= nil and version ~= vim.NIL and version ~= version_of(bufnr) then
    return { applied = false } -- the user typed since: the server sends it again against the new text
  end
  local group = groups[params.rewrite]
  local join = group and group.bufnr == bufnr and group.tick == api.nvim_buf_get_changedtick(bufnr)
  local ok, why = pcall(api.nvim_buf_call, bufnr, function()
    if join then pcall(vim.cmd, 'undojoin') end -- one undo step for the whole rewrite
    util.apply_text_edits(tde.edits, bufnr, encoding_of(client))
  end)
  if not ok then return { applied = false, failureReason = tostring(why) } end
  groups[params.rewrite] = { bufnr = bufnr, tick = api.nvim_buf_get_changedtick(bufnr) }
  vim.schedule(function() pcall(api.nvim_exec_autocmds, 'User', { pattern = 'FlowEditEdit', modeline = false }) end)
  return { applied = true }
end

-- workspace/applyEdit without Neovim's "Workspace edit <label>" message (the revert comes this way)
local function apply_edit(_, params, ctx)
  local client = lsp.get_client_by_id(ctx.client_id)
  local ok, why = pcall(util.apply_workspace_edit, params.edit, encoding_of(client))
  return { applied = ok, failureReason = not ok and tostring(why) or nil }
end

local function redraw()
  vim.schedule(function()
    pcall(vim.cmd, 'redrawstatus')
    pcall(api.nvim_exec_autocmds, 'User', { pattern = 'FlowEditStatus', modeline = false })
  end)
end

-- keep `value` as `store[id]`, and only the latest 50 ids
local function remember(store, id, value)
  if not store[id] then
    table.insert(store.order, id)
    if #store.order > 50 then store[table.remove(store.order, 1)] = nil end
  end
  store[id] = value
end

local function on_status(_, params, ctx)
  status[ctx.client_id] = params
  local req = type(params) == 'table' and params.request or nil
  if type(req) == 'table' and req.kind == 'rewrite' and req.id then
    remember(figures, req.id, req)
  end
  local review = type(params) == 'table' and params.review or nil
  if type(review) == 'table' and review.id then
    local before = reviews[review.id]
    remember(reviews, review.id, review)
    if review.state ~= 'reviewing' and (not before or before.state == 'reviewing') then
      say('review: ' .. tostring(review.message)) -- how it ended: "3 findings", "no uncommitted changes", ...
    end
  end
  if type(req) == 'table' and req.kind == 'rewrite' and req.outcome ~= nil and req.outcome ~= vim.NIL then
    for bufnr, id in pairs(running) do
      if id == req.id then rewrite_ended(bufnr, id) end
    end
  end
  redraw()
end

local function on_progress(err, params, ctx, config)
  local default = lsp.handlers['$/progress']
  if default then pcall(default, err, params, ctx, config) end
  local value = params and params.value or {}
  local shown = progress[ctx.client_id] or {}
  if value.kind == 'begin' then shown = { title = value.title, message = value.message }
  elseif value.kind == 'report' then shown.message = value.message or shown.message
  elseif value.kind == 'end' then shown = { title = shown.title, message = value.message, done = true } end
  progress[ctx.client_id] = shown
  redraw()
end

-- ----------------------------------------------------------------------------------- ghost text
local ghost = { ns = api.nvim_create_namespace('flowedit_ghost'), seq = 0 } -- bufnr, item, at

local function ghost_clear()
  if ghost.bufnr and api.nvim_buf_is_valid(ghost.bufnr) then
    api.nvim_buf_clear_namespace(ghost.bufnr, ghost.ns, 0, -1)
  end
  ghost.bufnr, ghost.item, ghost.at, ghost.shown = nil, nil, nil, nil
end

function M.ghost_text() -- what the ghost text shows now (nil when none): for tests and statuslines
  return ghost.shown
end

local function ghost_show(bufnr, client, item, row, col)
  local text = item.insertText
  if type(text) == 'table' then text = text.value end -- a StringValue (snippet): shown as it is
  if type(text) ~= 'string' or text == '' then return end
  local encoding = encoding_of(client)
  -- the item replaces item.range (from the start of what is typed to the end of what it types again)
  local typed = ''
  if item.range then
    local line = api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
    local s = item.range.start
    if s.line == row then
      local from = vim.lsp.util._get_line_byte_from_position and
        util._get_line_byte_from_position(bufnr, s, encoding) or s.character
      typed = line:sub(from + 1, col)
    end
  end
  if text:sub(1, #typed) ~= typed then return end
  local rest = text:sub(#typed + 1)
  -- the closers after the cursor the item types again (its range spans them) are shown where they are
  local e = item.range and item.range['end']
  if e and e.line == row then
    local line = api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ''
    local to = util._get_line_byte_from_position and util._get_line_byte_from_position(bufnr, e, encoding) or e.character
    local covered = line:sub(col + 1, to)
    if covered ~= '' and rest:sub(-#covered) == covered then rest = rest:sub(1, #rest - #covered) end
  end
  if rest == '' then return end
  local lines = vim.split(rest, '\n', { plain = true })
  local virt_lines = {}
  for i = 2, #lines do virt_lines[#virt_lines + 1] = { { lines[i], 'Comment' } } end
  api.nvim_buf_set_extmark(bufnr, ghost.ns, row, col, {
    virt_text = { { lines[1], 'Comment' } }, virt_text_pos = 'inline', hl_mode = 'combine',
    virt_lines = #virt_lines > 0 and virt_lines or nil,
  })
  ghost.bufnr, ghost.item, ghost.at, ghost.shown, ghost.client = bufnr, item, { row, col }, rest, client
end

local function ghost_request(bufnr)
  local client = client_of(bufnr)
  if not client or fn.mode():sub(1, 1) ~= 'i' then return end
  ghost.seq = ghost.seq + 1
  local seq, tick = ghost.seq, api.nvim_buf_get_changedtick(bufnr)
  local cursor = api.nvim_win_get_cursor(0)
  local row, col = cursor[1] - 1, cursor[2]
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    position = position(bufnr, row, col, encoding_of(client)),
    context = { triggerKind = 2 }, -- automatic
  }
  request(client, 'textDocument/inlineCompletion', params, function(err, result)
    if err or seq ~= ghost.seq or not api.nvim_buf_is_valid(bufnr) then return end
    local now = api.nvim_win_get_cursor(0)
    if api.nvim_buf_get_changedtick(bufnr) ~= tick or now[1] - 1 ~= row or now[2] ~= col
      or fn.mode():sub(1, 1) ~= 'i' then return end -- the user moved on: a newer request is out
    local items = result and (result.items or result) or {}
    ghost_clear()
    if items[1] then ghost_show(bufnr, client, items[1], row, col) end
  end, bufnr)
end

-- accept the ghost text: the item's edit, the cursor after it, and the item's command (acceptance counted)
function M.accept()
  local bufnr, item, client = ghost.bufnr, ghost.item, ghost.client
  if not item then return false end
  local row, col = ghost.at[1], ghost.at[2]
  local text = type(item.insertText) == 'table' and item.insertText.value or item.insertText
  local range = item.range or { start = position(bufnr, row, col, encoding_of(client)),
    ['end'] = position(bufnr, row, col, encoding_of(client)) }
  ghost_clear()
  util.apply_text_edits({ { range = range, newText = text } }, bufnr, encoding_of(client))
  -- the cursor goes to the end of the inserted text
  local lines = vim.split(text, '\n', { plain = true })
  local start_row = range.start.line
  local start_byte = #lines == 1 and
    (util._get_line_byte_from_position and util._get_line_byte_from_position(bufnr, range.start, encoding_of(client))
      or range.start.character) or 0
  local end_row = start_row + #lines - 1
  local end_col = (#lines == 1 and start_byte or 0) + #lines[#lines]
  pcall(api.nvim_win_set_cursor, 0, { end_row + 1, end_col })
  if item.command then
    request(client, 'workspace/executeCommand', { command = item.command.command, arguments = item.command.arguments },
      function() end, bufnr)
  end
  return true
end

local function ghost_attach(bufnr)
  if not GHOST or not M.config.ghost_text then return end
  if lsp.inline_completion then -- Neovim 0.12+: its own inline-completion client
    pcall(lsp.inline_completion.enable, true, { bufnr = bufnr })
    local key = M.config.keys.accept
    if key and key ~= '' then
      vim.keymap.set('i', key, function()
        if not lsp.inline_completion.get() then return api.nvim_replace_termcodes(key, true, false, true) end
      end, { buffer = bufnr, expr = true, desc = 'FlowEdit: accept the suggestion' })
    end
    return
  end
  local group = api.nvim_create_augroup('flowedit_ghost_' .. bufnr, { clear = true })
  local pending
  api.nvim_create_autocmd({ 'TextChangedI', 'TextChangedP' }, { group = group, buffer = bufnr, callback = function()
    ghost_clear()
    if pending then pending:stop() end
    if not M.config.ghost_text then return end
    if M.config.ghost_text_delay_ms > 0 then
      pending = vim.defer_fn(function() pending = nil; ghost_request(bufnr) end, M.config.ghost_text_delay_ms)
    else
      ghost_request(bufnr)
    end
  end })
  api.nvim_create_autocmd({ 'InsertLeave', 'BufLeave' }, { group = group, buffer = bufnr, callback = ghost_clear })
  api.nvim_create_autocmd('CursorMovedI', { group = group, buffer = bufnr, callback = function()
    local c = api.nvim_win_get_cursor(0)
    if ghost.at and (c[1] - 1 ~= ghost.at[1] or c[2] ~= ghost.at[2]) then ghost_clear() end
  end })
  local keys = M.config.keys
  for _, spec in ipairs({ { keys.accept, M.accept }, { keys.dismiss, function() ghost_clear(); return true end } }) do
    local key, action = spec[1], spec[2]
    if key and key ~= '' then
      vim.keymap.set('i', key, function()
        if ghost.item and ghost.bufnr == bufnr then
          vim.schedule(action)
          return ''
        end
        return api.nvim_replace_termcodes(key, true, false, true)
      end, { buffer = bufnr, expr = true, desc = 'FlowEdit: ghost text' })
    end
  end
end

-- ----------------------------------------------------------------------------------- attach
local function on_attach(client, bufnr)
  if M.config.completion then
    if lsp.completion and lsp.completion.enable then -- 0.11+: inserts a whole block, expands it
      lsp.completion.enable(true, client.id, bufnr, { autotrigger = false })
    end
    if vim.bo[bufnr].omnifunc == '' or vim.bo[bufnr].omnifunc == 'python3complete#Complete' then
      vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc' -- <C-x><C-o> (0.11 sets it itself)
    end
  end
  ghost_attach(bufnr)
  nextedit.attach(client, bufnr, notify, position)
  if M.config.on_attach then M.config.on_attach(client, bufnr) end
end

local function capabilities()
  local caps = lsp.protocol.make_client_capabilities()
  caps.experimental = vim.tbl_extend('force', caps.experimental or {}, { flowedit = { rewriteEdits = true } })
  return caps
end

local function root_dir(bufnr)
  local name = api.nvim_buf_get_name(bufnr)
  local start = name ~= '' and fn.fnamemodify(name, ':p:h') or fn.getcwd()
  local found = fn.finddir('.git', start .. ';')
  for _, marker in ipairs(M.config.root_markers) do
    local hit = fn.findfile(marker, start .. ';')
    if hit ~= '' then return fn.fnamemodify(hit, ':p:h') end
  end
  if found ~= '' then return fn.fnamemodify(found, ':p:h:h') end
  return fn.getcwd()
end

local function client_config(bufnr)
  return {
    name = NAME,
    cmd = M.config.cmd,
    root_dir = bufnr and root_dir(bufnr) or nil,
    init_options = M.config.init_options,
    capabilities = capabilities(),
    -- send each change at once: a rewrite's next edit waits for the echo of the last, and the
    -- user's typing must reach the server before the edit that would otherwise be stale
    flags = { debounce_text_changes = 0 },
    handlers = {
      ['flowedit/applyRewriteEdit'] = apply_rewrite_edit,
      ['workspace/applyEdit'] = apply_edit,
      ['flowedit/status'] = on_status,
      ['$/progress'] = on_progress,
      ['flowedit/nextEdit'] = nextedit.handler,
    },
    on_attach = on_attach,
  }
end

local function wanted(bufnr)
  local fts = M.config.filetypes
  if vim.bo[bufnr].buftype ~= '' or api.nvim_buf_get_name(bufnr) == '' then return false end
  if fts == '*' then return true end
  return vim.tbl_contains(fts, vim.bo[bufnr].filetype)
end

local started07 = {} -- 0.7: root -> client id

local function start(bufnr)
  if not wanted(bufnr) or client_of(bufnr) then return end
  local config = client_config(bufnr)
  if lsp.start then -- 0.8 .. 0.10
    lsp.start(config, { bufnr = bufnr })
    return
  end
  local id = started07[config.root_dir]
  if not id or not lsp.get_client_by_id(id) then
    id = lsp.start_client(config)
    started07[config.root_dir] = id
  end
  if id then lsp.buf_attach_client(bufnr, id) end
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  nextedit.setup(M.config.keys, execute)
  if lsp.config and lsp.enable then -- 0.11+
    local config = client_config(nil)
    config.root_dir = nil
    config.root_markers = M.config.root_markers
    if M.config.filetypes ~= '*' then config.filetypes = M.config.filetypes end
    lsp.config(NAME, config)
    lsp.enable(NAME)
  else
    local group = api.nvim_create_augroup('flowedit', { clear = true })
    api.nvim_create_autocmd('FileType', { group = group, callback = function(args) start(args.buf) end })
    for _, bufnr in ipairs(api.nvim_list_bufs()) do
      if api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].filetype ~= '' then start(bufnr) end
    end
  end
  M.commands()
end

-- ----------------------------------------------------------------------------------- commands
local function ask(prompt, given, then_do)
  if given and given ~= '' then return then_do(given) end
  vim.ui.input({ prompt = prompt }, function(text)
    if text ~= nil then then_do(text) end -- <Esc> at the prompt: nothing happens
  end)
end

-- a command's answer `result` ({id = ...}) started a stream in `bufnr`: the interrupt key works until it
-- ends (unless its end was heard first)
local function streaming(bufnr, result)
  if type(result) ~= 'table' or not result.id then return end
  local known = figures[result.id]
  if known and type(known.outcome) == 'string' then return end
  running[bufnr] = result.id
  map_interrupt(bufnr, true)
end

--- Rewrite `opts.range` (see command_range) of `bufnr` following `instruction` (asked when nil).
function M.rewrite(instruction, opts, bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  opts = opts or { range = 0 }
  local client = client_of(bufnr)
  if not client then return say('no flowedit server is attached to this buffer', vim.log.levels.WARN) end
  local range = command_range(bufnr, opts, encoding_of(client)) -- taken now: before the prompt moves anything
  ask('Rewrite: ', instruction, function(text)
    local args = { uri = vim.uri_from_bufnr(bufnr), range = range, version = version_of(bufnr) }
    if text ~= '' then args.instruction = text end
    execute(bufnr, 'flowedit.rewrite', args, function(result)
      if type(result) == 'table' and result.id then last_rewrite[bufnr] = result.id end
      streaming(bufnr, result)
    end)
  end)
end

function M.interrupt(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  execute(bufnr, 'flowedit.interrupt', { uri = vim.uri_from_bufnr(bufnr) }, function()
    local id = running[bufnr]
    if id then rewrite_ended(bufnr, id) end
  end)
end

function M.redirect(instruction, bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  local id = running[bufnr] or last_rewrite[bufnr]
  if not id then return say('no rewrite to redirect in this buffer', vim.log.levels.WARN) end
  ask('Redirect: ', instruction, function(text)
    if text == '' then return end
    execute(bufnr, 'flowedit.redirect', { id = id, instruction = text }, function(result) streaming(bufnr, result) end)
  end)
end

function M.continue(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  if last_rewrite[bufnr] then figures[last_rewrite[bufnr]] = nil end -- its old outcome is over
  execute(bufnr, 'flowedit.continue', { uri = vim.uri_from_bufnr(bufnr) }, function(result) streaming(bufnr, result) end)
end

function M.revert(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  execute(bufnr, 'flowedit.revert', { uri = vim.uri_from_bufnr(bufnr) }, function(result)
    if type(result) == 'table' and result.reverted == false then say(result.reason or 'nothing reverted') end
  end)
end

local REVIEW_SCOPES = { selection = true, file = true, changes = true, workspace = true }

--- Review `scope` of `bufnr`: "selection" (`opts`' range, see command_range), "file", "changes" (its
--- uncommitted changes against git HEAD) or "workspace" (every changed file of the workspace), following
--- `instruction` (nil: the server's). The findings come as diagnostics with source "flowedit"; their fixes
--- and dismissals as code actions. :FlowEditInterrupt stops it (what it showed stays).
function M.review(scope, opts, bufnr, instruction)
  bufnr = bufnr or api.nvim_get_current_buf()
  assert(REVIEW_SCOPES[scope], 'FlowEdit: a review scope is selection, file, changes or workspace')
  local client = client_of(bufnr)
  if not client then return say('no flowedit server is attached to this buffer', vim.log.levels.WARN) end
  local args = { scope = scope == 'workspace' and 'changes' or scope } -- (no uri: the workspace's changes)
  if scope ~= 'workspace' then args.uri = vim.uri_from_bufnr(bufnr) end
  if scope == 'selection' then args.range = command_range(bufnr, opts or { range = 0 }, encoding_of(client)) end
  if instruction and instruction ~= '' then args.instruction = instruction end
  execute(bufnr, 'flowedit.review', args, function(result)
    if type(result) == 'table' and result.id then last_review[bufnr] = result.id end
  end)
end

-- :[range]FlowEditReview [selection|file|changes|workspace] [instruction]: a range reviews the selection,
-- none the file
local function review_command(o)
  local scope, rest = o.args:match('^%s*(%S*)%s*(.-)%s*$')
  if not REVIEW_SCOPES[scope] then scope, rest = o.range > 0 and 'selection' or 'file', o.args end
  M.review(scope, o, nil, rest)
end

--- Check the setup end to end (the server's flowedit.checkSetup: each feature's engine asked once, the
--- editor's capabilities): the report in a scratch window; problems also as a warning.
function M.check_setup(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  say('checking the setup…')
  execute(bufnr, 'flowedit.checkSetup', {}, function(result)
    if type(result) ~= 'table' or type(result.text) ~= 'string' then return end
    vim.cmd('botright new')
    local buf = api.nvim_get_current_buf()
    vim.bo[buf].buftype, vim.bo[buf].bufhidden, vim.bo[buf].swapfile = 'nofile', 'wipe', false
    api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(result.text, '\n'))
    vim.bo[buf].modifiable = false
    vim.b[buf].flowedit_check = result.ok and 'ok' or 'problems'
    pcall(api.nvim_buf_set_name, buf, 'FlowEdit setup check')
  end)
end

function M.commands()
  local cmd = api.nvim_create_user_command
  cmd('FlowEditRewrite', function(o) M.rewrite(o.args ~= '' and o.args or nil, o) end,
    { nargs = '?', range = true, desc = 'FlowEdit: rewrite the selection (or line) following an instruction' })
  cmd('FlowEditInterrupt', function() M.interrupt() end, { desc = 'FlowEdit: stop the rewrite or the review' })
  cmd('FlowEditReview', review_command, { nargs = '*', range = true,
    complete = function() return { 'selection', 'file', 'changes', 'workspace' } end,
    desc = 'FlowEdit: review the selection, the file (no range), its uncommitted changes or the workspace\'s' })
  cmd('FlowEditRedirect', function(o) M.redirect(o.args ~= '' and o.args or nil) end,
    { nargs = '?', desc = 'FlowEdit: redirect the rewrite with a new instruction' })
  cmd('FlowEditContinue', function() M.continue() end, { desc = 'FlowEdit: continue a stopped rewrite' })
  cmd('FlowEditRevert', function() M.revert() end, { desc = 'FlowEdit: put back what the last rewrite replaced' })
  cmd('FlowEditAcceptNextEdit', function() nextedit.accept() end, { desc = 'FlowEdit: apply the next edit shown' })
  cmd('FlowEditDismissNextEdit', function() nextedit.dismiss() end, { desc = 'FlowEdit: dismiss the next edit shown' })
  cmd('FlowEditCheckSetup', function() M.check_setup() end,
    { desc = 'FlowEdit: check the setup (engines, endpoint, key, first tokens, what this editor can do)' })
end

-- ----------------------------------------------------------------------------------- statusline
--- "FlowEdit streaming 412 tok 2,310 tok/s TTFT 84 ms" while a rewrite streams, "FlowEdit gpt-5 ✓" when
--- idle; "" in buffers without flowedit. For 'statusline': %{v:lua.require'flowedit'.statusline()}
function M.statusline(bufnr)
  bufnr = bufnr or api.nvim_get_current_buf()
  local client = client_of(bufnr)
  if not client then return '' end
  local st = status[client.id]
  if not st then return 'FlowEdit starting' end
  local parts = { 'FlowEdit' }
  local req = type(st.request) == 'table' and st.request or nil
  local model = st.model ~= vim.NIL and st.model or nil
  if req and running[bufnr] == req.id then
    parts[#parts + 1] = 'streaming'
    parts[#parts + 1] = tostring(req.tokens or 0) .. ' tok'
    if type(req.tokens_per_s) == 'number' then parts[#parts + 1] = string.format('%d tok/s', req.tokens_per_s) end
    if type(req.ttft_ms) == 'number' then parts[#parts + 1] = string.format('TTFT %d ms', req.ttft_ms) end
  else
    parts[#parts + 1] = tostring(st.state or '?')
    if req and type(req.outcome) == 'string' then parts[#parts + 1] = req.outcome end
  end
  if model then parts[#parts + 1] = '(' .. tostring(model) .. ')' end
  local p = progress[client.id]
  if p and not p.done and p.message and not (req and running[bufnr] == req.id) then
    parts[#parts + 1] = p.message
  end
  return table.concat(parts, ' ')
end

--- The last figures the server sent for rewrite `id` (outcome, tokens, ttft_ms, tokens_per_s, ...), and
--- the id of the last rewrite started in `bufnr`.
function M.rewrite_status(id) return figures[id] end
--- The next edit shown in `bufnr` ({ id, edits = { {range, oldText, newText} } }), or nil.
function M.next_edit(bufnr) return nextedit.shown(bufnr) end
function M.last_rewrite(bufnr) return last_rewrite[bufnr or api.nvim_get_current_buf()] end
--- The last figures the server sent for review `id` (state, message, findings, scope, ...), and the id of
--- the last review started in `bufnr`.
function M.review_status(id) return reviews[id] end
function M.last_review(bufnr) return last_review[bufnr or api.nvim_get_current_buf()] end

--- What the statusline is built from, for other statusline plugins: { state, model, request, progress }.
function M.status(bufnr)
  local client = client_of(bufnr or api.nvim_get_current_buf())
  if not client then return nil end
  local st = status[client.id] or {}
  return { state = st.state, model = st.model, request = st.request, progress = progress[client.id],
    streaming = running[bufnr or api.nvim_get_current_buf()] }
end

return M
