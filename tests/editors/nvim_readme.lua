-- Headless Neovim driver for tests/editors/test_neovim_readme.py: the README's Neovim configuration, loaded
-- as a user's init.lua would be (before the file), must start `flowedit lsp` for the Python buffer and
-- attach it; the driver then asks it for code actions and a completion, as the editor would.
--
-- Usage: nvim --headless --clean -u tests/editors/nvim_readme.lua file.py
-- Env (set by the test), besides those of nvim_driver.lua:
--   FLOWEDIT_NVIM_CONFIG  the file holding the README's snippet
--   FLOWEDIT_NVIM_AFTER   right after the first occurrence of this text: the cursor for the completion and
--                         the end of the selection for the code actions
-- Exit: 0 = the driver got through (the test judges the outcome), 1 = the driver itself failed.

local driver = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_driver.lua')
local summary = driver.summary
local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients

dofile(assert(os.getenv('FLOWEDIT_NVIM_CONFIG'), 'FLOWEDIT_NVIM_CONFIG unset'))

local function attached(bufnr)
  local out = {}
  for _, c in pairs(get_clients()) do
    if vim.lsp.buf_is_attached(bufnr, c.id) then table.insert(out, c) end
  end
  return out
end

local function main()
  local bufnr = vim.api.nvim_get_current_buf()
  summary.filetype = vim.bo[bufnr].filetype
  vim.wait(15000, function()
    local cs = attached(bufnr); return #cs > 0 and cs[1].initialized
  end, 10)
  summary.attached = vim.tbl_map(function(c) return c.name end, attached(bufnr))
  summary.running = vim.tbl_map(function(c) return c.name end, get_clients())
  summary.omnifunc = vim.bo[bufnr].omnifunc
  if #summary.attached == 0 then return driver.finish() end
  local client = attached(bufnr)[1]

  local after = assert(os.getenv('FLOWEDIT_NVIM_AFTER'), 'FLOWEDIT_NVIM_AFTER unset')
  local row, s
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    s = string.find(line, after, 1, true)
    if s then row = i; break end
  end
  vim.api.nvim_win_set_cursor(0, { row, s - 1 + #after })
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)

  local actions = vim.lsp.buf_request_sync(bufnr, 'textDocument/codeAction', {
    -- the line up to the cursor, as a visual selection of it would send
    textDocument = params.textDocument,
    range = { start = { line = params.position.line, character = 0 }, ['end'] = params.position },
    context = { diagnostics = {} },
  }, 10000) or {}
  summary.actions = {}
  for _, r in pairs(actions) do
    for _, a in ipairs(r.result or {}) do table.insert(summary.actions, a.title) end
  end

  local completions = vim.lsp.buf_request_sync(bufnr, 'textDocument/completion', params, 10000) or {}
  summary.completions = {}
  for _, r in pairs(completions) do
    for _, it in ipairs(r.result and (r.result.items or r.result) or {}) do
      table.insert(summary.completions, it.textEdit and it.textEdit.newText or it.insertText or it.label)
    end
  end
  driver.finish()
end

vim.api.nvim_create_autocmd('VimEnter', { once = true, callback = function()
  local ok, err = pcall(main)
  if not ok then driver.fail(tostring(err)); driver.finish() end
end })
