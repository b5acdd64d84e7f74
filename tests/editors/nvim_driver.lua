-- What the headless Neovim drivers (nvim_rewrite.lua, nvim_complete.lua) share: the clock and the log on
-- stderr, the environment, the JSON summary, starting `flowedit lsp` as the buffer's LSP client, and the
-- end of the run. A driver loads it with dofile() and gets this module's table.
--
-- Env (set by tests/editors/nvim.py):
--   FLOWEDIT_NVIM_SERVER_CMD  JSON list: the language server command (python -m flowedit.cli lsp --endpoint ...)
--   FLOWEDIT_NVIM_SERVER_LOG  file for the server's stderr (optional)
--   FLOWEDIT_NVIM_OUT         where to write the final buffer lines
--   FLOWEDIT_NVIM_SUMMARY     where to write the JSON summary
-- Written for Neovim 0.7 (Debian) and kept working on 0.11 (client:method() API).

-- ftplugin/python.vim would probe the python3 provider (~1.4 s); skip it.
vim.g.loaded_python3_provider = 0

local M = {}

-- the server's log comes as window/logMessage once it is initialized (below its --log-level, nothing
-- stays on its stderr): keep it beside its stderr, in FLOWEDIT_NVIM_SERVER_LOG
local log_path = os.getenv('FLOWEDIT_NVIM_SERVER_LOG')
if log_path and log_path ~= '' then
  local shown = vim.lsp.handlers['window/logMessage']
  vim.lsp.handlers['window/logMessage'] = function(err, params, ctx, config)
    local f = io.open(log_path, 'a')
    if f and type(params) == 'table' then
      f:write(string.format('[window/logMessage %s] %s\n', tostring(params.type), tostring(params.message)))
      f:close()
    end
    return shown(err, params, ctx, config)
  end
end

local t_start = vim.loop.hrtime()
function M.ms() return (vim.loop.hrtime() - t_start) / 1e6 end
function M.say(fmt, ...)
  io.stderr:write(string.format('[%8.1f ms] ' .. fmt .. '\n', M.ms(), ...))
end

M.NEW = vim.fn.has('nvim-0.11') == 1 -- client:method() style API
local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients

-- the variable `name`, or `default` when it is unset or empty
function M.env(name, default)
  local v = os.getenv(name)
  if v == nil or v == '' then return default end
  return v
end

M.summary = { nvim = tostring(vim.version().major) .. '.' .. tostring(vim.version().minor) .. '.'
  .. tostring(vim.version().patch), errors = {} }

-- note an error of the driver; the run goes on until finish(), which then exits 1
function M.fail(what)
  M.say('ERROR %s', what)
  table.insert(M.summary.errors, what)
end

-- start the language server as an LSP client of `bufnr` with `handlers` and wait until it is initialized:
-- the client, or nil and what went wrong
function M.start_client(bufnr, handlers)
  local cmd = vim.fn.json_decode((assert(os.getenv('FLOWEDIT_NVIM_SERVER_CMD'), 'FLOWEDIT_NVIM_SERVER_CMD unset')))
  if M.env('FLOWEDIT_NVIM_SERVER_LOG', nil) then -- keep the server's stderr (its log) in a file of its own
    cmd = vim.list_extend({ '/bin/sh', '-c', 'exec "$@" 2>>"$FLOWEDIT_NVIM_SERVER_LOG"', 'sh' }, cmd)
  end
  local config = {
    name = 'flowedit',
    cmd = cmd,
    root_dir = vim.fn.getcwd(),
    handlers = handlers,
    on_exit = function(code, signal) M.say('server exited code=%s signal=%s', code, signal) end,
  }
  local client_id
  if vim.lsp.start then -- 0.8+: starts and attaches to the current buffer
    client_id = vim.lsp.start(config, { bufnr = bufnr })
  else -- 0.7
    client_id = vim.lsp.start_client(config)
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
  if not client_id then return nil, 'client did not start' end
  local inited = vim.wait(15000, function()
    local c = vim.lsp.get_client_by_id(client_id); return c ~= nil and c.initialized
  end, 10)
  if not inited then return nil, 'client not initialized within 15 s' end
  local client = vim.lsp.get_client_by_id(client_id)
  M.summary.offset_encoding = client.offset_encoding
  M.say('client initialized, offset_encoding=%s', tostring(client.offset_encoding))
  return client
end

-- write the buffer and the summary, stop the clients and quit: exit 0 if the driver got through, else 1
local finished = false
function M.finish()
  if finished then return end
  finished = true
  local bufnr = vim.api.nvim_get_current_buf()
  M.summary.total_ms = M.ms()
  vim.fn.writefile(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), M.env('FLOWEDIT_NVIM_OUT', 'out.py'))
  vim.fn.writefile({ vim.fn.json_encode(M.summary) }, M.env('FLOWEDIT_NVIM_SUMMARY', 'summary.json'))
  for _, c in pairs(get_clients()) do
    if M.NEW then c:stop() else c.stop() end
  end
  vim.wait(3000, function() return #get_clients() == 0 end, 20)
  M.say('done in %.1f ms, %d error(s)', M.ms(), #M.summary.errors)
  if #M.summary.errors == 0 then vim.cmd('qall!') else vim.cmd('cquit 1') end
end

return M
