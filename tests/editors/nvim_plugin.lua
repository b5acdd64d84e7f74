-- Headless Neovim driver for tests/editors/test_neovim_plugin.py: the plugin of editors/nvim, loaded by the
-- configuration docs/editors.md gives (FLOWEDIT_NVIM_CONFIG), used as a user would — keys typed through
-- nvim_feedkeys, commands typed on the command line — in one of two scenarios (FLOWEDIT_NVIM_SCENARIO):
--   rewrite  :'<,'>FlowEditRewrite <instruction> on a visual selection → one `u` undoes it, <C-r> redoes
--            it, :FlowEditRevert; a rewrite stopped with <Esc>; one redirected with :FlowEditRedirect; one
--            during which the user types at 80 ms a key in another part of the buffer
--   complete ghost text accepted with <Tab> (0.10+), then the completion fallback through <C-x><C-o>
--   next_edit  a word renamed with `cw`: the next edit shown as virtual text, <Tab> jumps to it, <Tab>
--            accepts it; a second one dismissed with <Esc>
--   review   :FlowEditReview (the file): its findings in vim.diagnostic; the "Apply fix" code action on the
--            line of FLOWEDIT_NVIM_TARGET through vim.lsp.buf.code_action (filter + apply on 0.8+, the
--            menu's item on 0.7); :'<,'>FlowEditReview on the lines of FLOWEDIT_NVIM_SELECT; another
--            review of the file stopped with :FlowEditInterrupt once it showed a finding; a review of the
--            workspace's changes outside git; "Dismiss this … finding" on the line of FLOWEDIT_NVIM_DISMISS, then
--            the file reviewed again; lines typed above the first finding (insert mode, then
--            nvim_buf_set_lines), then its own line edited
-- Each step writes what it saw into the summary (the test judges it).
--
-- Env, besides those of nvim_driver.lua: FLOWEDIT_NVIM_CONFIG, FLOWEDIT_NVIM_SCENARIO, FLOWEDIT_NVIM_TARGET
-- (rewrite: the text to select).
-- Keys given to nvim_feedkeys are processed only once Lua returns to the main loop: the scenario runs in a
-- coroutine that yields to the loop whenever it waits.

local driver = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':p:h') .. '/nvim_driver.lua')
local ms, say, env = driver.ms, driver.say, driver.env
local summary = driver.summary
vim.o.showmode = false
vim.o.swapfile = false

dofile(assert(os.getenv('FLOWEDIT_NVIM_CONFIG'), 'FLOWEDIT_NVIM_CONFIG unset'))
local flowedit = require('flowedit')

-- printed messages (no "Workspace edit ..." may be among them)
summary.messages = {}
local orig_print = print
_G.print = function(...)
  table.insert(summary.messages, table.concat(vim.tbl_map(tostring, { ... }), ' '))
  return orig_print(...)
end

local function keys(s) return vim.api.nvim_replace_termcodes(s, true, false, true) end
local function feed(s) vim.api.nvim_feedkeys(keys(s), 'mt', false) end -- mapped: the plugin's keys apply

local co
local function resume()
  local ok, err = coroutine.resume(co)
  if not ok then
    driver.fail(tostring(err) .. '\n' .. debug.traceback(co))
    driver.finish()
  end
end
local function sleep(delay) vim.defer_fn(resume, delay); coroutine.yield() end
local function wait_until(what, pred, timeout)
  local deadline = ms() + (timeout or 15000)
  while true do
    local v = pred()
    if v then return v end
    if ms() > deadline then error('timed out waiting for ' .. what) end
    sleep(5)
  end
end

local bufnr
local function text() return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') .. '\n' end

-- every applied streamed edit, when (the plugin fires User FlowEditEdit after each)
local edits = {}
vim.api.nvim_create_autocmd('User', { pattern = 'FlowEditEdit', callback = function() table.insert(edits, ms()) end })

local function attached()
  local get = vim.lsp.get_clients or vim.lsp.get_active_clients
  for _, c in pairs(get()) do
    if c.name == 'flowedit' and vim.lsp.buf_is_attached(bufnr, c.id) and c.initialized then return c end
  end
end

-- select the target charwise, like a user: cursor on its first character, v, l to its last
local function select_target()
  local target = assert(os.getenv('FLOWEDIT_NVIM_TARGET'), 'FLOWEDIT_NVIM_TARGET unset')
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local s = string.find(line, target, 1, true)
    if s then
      vim.api.nvim_win_set_cursor(0, { i, s - 1 })
      return 'v' .. (#target > 1 and tostring(#target - 1) .. 'l' or '')
    end
  end
  error('target not in the buffer')
end

-- `keys_typed` start a rewrite or a review: its id once the plugin has the server's answer (`last` gives it)
local function started(what, last, keys_typed)
  local before = last(bufnr)
  feed(keys_typed)
  return wait_until(what .. ' to start', function()
    local id = last(bufnr)
    return id ~= before and id or nil
  end)
end

-- :'<,'>FlowEditRewrite <instruction> from a visual selection of the target; its rewrite id once running
local function start_rewrite(instruction)
  return started('the rewrite', flowedit.last_rewrite, '<Esc>' .. select_target() .. ':FlowEditRewrite ' ..
    instruction .. '<CR>')
end

local function outcome_of(id)
  local st = flowedit.rewrite_status(id)
  return st and type(st.outcome) == 'string' and st or nil
end

local function rewrite_scenario()
  local original = text()
  local step = {}
  summary.steps = step

  -- 1. rewrite with an instruction, exact; one `u` undoes it all, <C-r> puts it back; revert
  local first_edit = #edits + 1
  local t0 = ms()
  local id = start_rewrite('make it a call')
  local st = wait_until('the rewrite to end', function() return outcome_of(id) end, 30000)
  step.rewrite = { outcome = st.outcome, text = text(), edits = #edits - first_edit + 1, figures = st,
    statusline_seen = summary.statusline_seen, ms = ms() - t0 }
  feed('u')
  sleep(50)
  wait_until('u', function() return vim.fn.mode() == 'n' end)
  step.undo = text()
  feed('<C-r>')
  sleep(50)
  step.redo = text()
  vim.cmd('FlowEditRevert')
  wait_until('the revert', function() return text() == original end, 10000)
  step.revert = text()

  -- 2. interrupted with <Esc> after two edits: nothing more lands
  id = start_rewrite('make it a call')
  local from = #edits
  wait_until('two edits of the rewrite', function() return #edits >= from + 2 end)
  feed('<Esc>')
  st = wait_until('the interrupt', function() return outcome_of(id) end)
  local stopped, count = text(), #edits
  sleep(600)
  step.interrupt = { outcome = st.outcome, changed_after = text() ~= stopped, edits_after = #edits - count,
    edits_before = count - from, partial = stopped ~= original }
  vim.cmd('FlowEditRevert')
  wait_until('the revert of the interrupted rewrite', function() return text() == original end, 10000)

  -- 3. redirected after its first edit: the new instruction rewrites the same region
  id = start_rewrite('make it a call')
  from = #edits
  wait_until('an edit of the rewrite', function() return #edits >= from + 1 end)
  vim.cmd('FlowEditRedirect use keyword arguments')
  st = wait_until('the redirected rewrite to end', function() return outcome_of(id) end, 30000)
  step.redirect = { outcome = st.outcome, text = text() }
  vim.cmd('FlowEditRevert')
  wait_until('the revert of the redirected rewrite', function() return text() == original end, 10000)

  -- 4. typing at 80 ms a key at the end of the last line while a rewrite streams
  id = start_rewrite('make it a call')
  from = #edits
  wait_until('an edit of the rewrite', function() return #edits >= from + 1 end)
  local last = vim.api.nvim_buf_line_count(bufnr)
  vim.api.nvim_win_set_cursor(0, { last, 0 })
  feed('A')
  local typed = 0
  while not outcome_of(id) and typed < 40 do
    sleep(80) -- the typist's pace
    feed('x')
    typed = typed + 1
  end
  feed('<Esc>')
  st = wait_until('the rewrite typed over to end', function() return outcome_of(id) end, 30000)
  local times = {}
  for i = from + 1, #edits do table.insert(times, edits[i]) end
  local gap = 0
  for i = 2, #times do gap = math.max(gap, times[i] - times[i - 1]) end
  step.typing = { outcome = st.outcome, text = text(), typed = typed, edits = #times, max_gap_ms = gap }
  step.statusline = flowedit.statusline(bufnr)
  sleep(300)
  step.final = text()

  -- 5. :FlowEditCheckSetup: the report in a window of its own
  vim.cmd('FlowEditCheckSetup')
  local report = wait_until('the setup check', function()
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.b[b].flowedit_check then return b end
    end
  end, 60000)
  step.check = { verdict = vim.b[report].flowedit_check,
    text = table.concat(vim.api.nvim_buf_get_lines(report, 0, -1, false), '\n') }
end

local function complete_scenario()
  local step = {}
  summary.steps = step
  -- the cursor on the first character after the first occurrence of `what`
  local function cursor_after(what)
    for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
      local s = string.find(line, what, 1, true)
      if s then
        vim.api.nvim_win_set_cursor(0, { i, s - 1 + #what })
        return i
      end
    end
    error('no ' .. what .. ' in the buffer')
  end
  step.omnifunc = vim.bo[bufnr].omnifunc
  -- ghost text: type the `t` of `compute(tot` (text after the cursor) and accept what shows with <Tab>
  if vim.fn.has('nvim-0.10') == 1 then
    local row = cursor_after('compute(to')
    feed('it')
    local shown = wait_until('ghost text', function() return flowedit.ghost_text() end)
    local virt
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, -1, 0, -1, { details = true })) do
      if m[4].virt_text then virt = { row = m[2], col = m[3], text = m[4].virt_text[1][1], pos = m[4].virt_text_pos } end
    end
    feed('<Tab>')
    -- accepted: the line holds it (the ghost text that may show next is the speculative next suggestion)
    wait_until('the ghost text accepted', function()
      return vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1] ~= 'a = compute(tot)'
        and flowedit.ghost_text() ~= shown
    end)
    sleep(20)
    step.ghost = { shown = shown, extmark = virt, line = vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1],
      cursor = vim.api.nvim_win_get_cursor(0) }
    feed('<Esc>')
    sleep(20)
  end
  -- the completion fallback: <C-x><C-o> after `compute(tot` of the next line (ghost text off for it)
  flowedit.config.ghost_text = false
  local row = cursor_after('b = compute(tot')
  vim.o.completeopt = 'menuone,noselect'
  feed('i<C-x><C-o>')
  wait_until('the completion menu', function() return vim.fn.pumvisible() == 1 end)
  feed('<C-n><C-y><Esc>')
  wait_until('normal mode', function() return vim.fn.mode() == 'n' end)
  sleep(20)
  step.fallback = { line = vim.api.nvim_buf_get_lines(bufnr, row - 1, row, false)[1] }
end

local function next_edit_scenario()
  local step = {}
  summary.steps = step
  local function marks()
    local out = {}
    local ns = vim.api.nvim_get_namespaces().flowedit_next_edit
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true })) do
      local d = m[4]
      out[#out + 1] = { row = m[2], col = m[3], end_col = d.end_col, hl = d.hl_group,
        virt = d.virt_text and d.virt_text[1][1] or nil, pos = d.virt_text_pos }
    end
    return out
  end
  -- rename the parameter on line 1 as a user does: cursor on it, cw, the new name, <Esc>
  vim.api.nvim_win_set_cursor(0, { 1, assert(string.find(vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1], 'width', 1, true)) - 1 })
  feed('cwsize<Esc>')
  local shown = wait_until('a next edit', function() return flowedit.next_edit(bufnr) end)
  sleep(30)
  step.shown = { count = #shown.edits, old = shown.edits[1].oldText, new = shown.edits[1].newText, marks = marks(),
    text = text() }
  feed('<Tab>') -- to the edit
  wait_until('the cursor on the edit', function() return vim.api.nvim_win_get_cursor(0)[1] - 1 == shown.edits[1].range.start.line end)
  step.jumped = vim.api.nvim_win_get_cursor(0)
  feed('<Tab>') -- accept
  wait_until('the next edit applied', function() return not text():find('width', 1, true) end)
  sleep(30)
  step.accepted = { text = text(), shown = flowedit.next_edit(bufnr) ~= nil, marks = #marks() }
  -- another rename, dismissed
  vim.api.nvim_win_set_cursor(0, { 1, assert(string.find(vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1], 'height', 1, true)) - 1 })
  feed('cwdepth<Esc>')
  wait_until('another next edit', function() return flowedit.next_edit(bufnr) end)
  feed('<Esc>')
  wait_until('the next edit dismissed', function() return not flowedit.next_edit(bufnr) end)
  sleep(200)
  step.dismissed = { text = text(), marks = #marks(), shown = flowedit.next_edit(bufnr) ~= nil }
end

-- what vim.diagnostic holds for the buffer, in line order
local function findings()
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    out[#out + 1] = { lnum = d.lnum, end_lnum = d.end_lnum, col = d.col, end_col = d.end_col, source = d.source,
      code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code), message = d.message,
      severity = d.severity }
  end
  table.sort(out, function(a, b) return a.lnum < b.lnum end)
  return out
end

local function row_of(what)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if line:find(what, 1, true) then return i end
  end
  error('no ' .. what .. ' in the buffer')
end

-- a command line that starts a review; the review's id
local function start_review(keys_typed)
  return started('the review', flowedit.last_review, keys_typed .. '<CR>')
end

-- a review typed on the command line; its figures once it ended
local function review(keys_typed)
  local id = start_review(keys_typed)
  return wait_until('the review to end', function()
    local st = flowedit.review_status(id)
    return st and st.state ~= 'reviewing' and st or nil
  end, 30000)
end

-- the code action whose title starts with `prefix`, on the line of `target`, as a user picks it from the code
-- actions there, once `done()` says it acted; what the menu offered, and what `done` gave
local function pick_action(target, prefix, what, done)
  vim.api.nvim_win_set_cursor(0, { row_of(target), 4 })
  local offered = {}
  local select = vim.ui.select
  vim.ui.select = function(items, _, on_choice) -- (0.7: the menu; the user picks the action)
    for _, item in ipairs(items) do offered[#offered + 1] = (item.action or item[2]).title end
    for _, item in ipairs(items) do
      if (item.action or item[2]).title:find(prefix, 1, true) == 1 then return on_choice(item) end
    end
    return on_choice(nil)
  end
  if vim.fn.has('nvim-0.8') == 1 then
    vim.lsp.buf.code_action({ apply = true, filter = function(a) return a.title:find(prefix, 1, true) == 1 end })
  else
    vim.lsp.buf.code_action()
  end
  local result = wait_until(what, done)
  vim.ui.select = select
  return offered, result
end

-- (a predicate) the findings, once there are `count`
local function findings_are(count)
  return function()
    local f = findings()
    return #f == count and f or nil
  end
end

-- "Apply fix" on the line of `target`
local function apply_fix(target)
  local count, original = #findings(), text()
  local offered = pick_action(target, 'Apply fix', 'the fix', function() return text() ~= original end)
  local fixed = wait_until('the fixed finding gone', findings_are(count - 1))
  return { text = text(), offered = offered, findings = fixed }
end

-- :FlowEditInterrupt once the file's next review showed a finding
local function interrupt_review()
  local id = start_review(':FlowEditReview file')
  wait_until('a finding of the running review', function()
    local st = flowedit.review_status(id)
    return st and st.state == 'reviewing' and st.message:find('^reviewing… [1-9]')
  end, 30000)
  vim.cmd('FlowEditInterrupt')
  local st = wait_until('the review to stop', function()
    local st = flowedit.review_status(id)
    return st.state ~= 'reviewing' and st or nil
  end)
  return { status = st, findings = findings() }
end

-- the findings' first lines (0-based) once vim.diagnostic holds `count` findings, the first at line `row`
local function first_at(row)
  return wait_until('a finding at line ' .. row, function()
    local f = findings()
    return f[1] and f[1].lnum == row and f or nil
  end)
end

-- 7. the user types: two lines inserted above the first finding in insert mode, one more by
-- nvim_buf_set_lines (another plugin's edit): the finding moves with its code; then its own line edited in
-- insert mode: it is withdrawn
local function typing_over_findings()
  local out = {}
  local f = findings()
  out.before = f
  local row = f[1].lnum
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  feed('O# one<CR># two<Esc>')
  out.typed = first_at(row + 2)
  vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { '# three' })
  out.set_lines = first_at(row + 3)
  out.text = text()
  vim.api.nvim_win_set_cursor(0, { row + 4, 0 })
  feed('A  # edited<Esc>')
  out.edited = wait_until('the edited finding withdrawn', findings_are(#out.set_lines - 1))
  out.edited_text = text()
  return out
end

local function review_scenario()
  local step = {}
  summary.steps = step
  -- (the statusline while a review runs, sampled on every status and progress)
  vim.api.nvim_create_autocmd('User', { pattern = 'FlowEditStatus', callback = function()
    local s = flowedit.statusline(bufnr)
    if s:find('reviewing', 1, true) then step.statusline_seen = s end
  end })
  -- 1. the file: every anchored finding as a diagnostic at its lines
  local st = review(':FlowEditReview')
  step.file = { status = st, findings = wait_until('the findings', function()
    local f = findings()
    return #f >= st.findings and f or nil
  end) }
  -- 2. "Apply fix" through the code actions
  step.fix = apply_fix(assert(os.getenv('FLOWEDIT_NVIM_TARGET'), 'FLOWEDIT_NVIM_TARGET unset'))
  -- 3. the lines of FLOWEDIT_NVIM_SELECT selected linewise: a review of those lines only
  local first, last = row_of(os.getenv('FLOWEDIT_NVIM_SELECT')), vim.api.nvim_buf_line_count(bufnr)
  vim.api.nvim_win_set_cursor(0, { first, 0 })
  st = review('V' .. (last - first) .. 'j:FlowEditReview')
  step.selection = { status = st, findings = findings() }
  -- 4. a running review stopped: what it showed stays
  step.interrupt = interrupt_review()
  -- 5. the workspace's changes outside a git repository: nothing to review, said in a message
  local said, notify = {}, vim.notify
  vim.notify = function(msg, ...) said[#said + 1] = msg; return notify(msg, ...) end
  st = review(':FlowEditReview workspace')
  wait_until('the message of its end', function() return vim.tbl_contains(said, 'FlowEdit: review: ' .. st.message) end)
  vim.notify = notify
  step.workspace = { status = st, said = said }
  -- 6. "Dismiss this … finding" on the line of FLOWEDIT_NVIM_DISMISS: gone, and the file's next review does not
  -- show it again
  local dismiss = assert(os.getenv('FLOWEDIT_NVIM_DISMISS'), 'FLOWEDIT_NVIM_DISMISS unset')
  local offered, left = pick_action(dismiss, 'Dismiss this', 'the finding dismissed', findings_are(#findings() - 1))
  step.dismiss = { offered = offered, findings = left }
  st = review(':FlowEditReview file')
  step.dismiss.again = { status = st, findings = wait_until('the findings', function()
    local f = findings()
    return #f >= st.findings and f or nil
  end) }
  step.typing = typing_over_findings()
end

local function main()
  bufnr = vim.api.nvim_get_current_buf()
  summary.filetype = vim.bo[bufnr].filetype
  local client = wait_until('flowedit to attach', attached)
  summary.offset_encoding = client.offset_encoding
  summary.statusline_idle = wait_until('a status', function()
    local s = flowedit.statusline(bufnr)
    return s ~= 'FlowEdit starting' and s or nil
  end)
  local scenario = env('FLOWEDIT_NVIM_SCENARIO', 'rewrite')
  summary.scenario = scenario
  if scenario == 'rewrite' then
    -- the statusline while a rewrite streams (sampled on every status)
    vim.api.nvim_create_autocmd('User', { pattern = 'FlowEditStatus', callback = function()
      local s = flowedit.statusline(bufnr)
      if s:find('streaming', 1, true) then summary.statusline_seen = s end
    end })
    rewrite_scenario()
  elseif scenario == 'next_edit' then
    next_edit_scenario()
  elseif scenario == 'review' then
    review_scenario()
  else
    complete_scenario()
  end
  driver.finish()
end

vim.api.nvim_create_autocmd('VimEnter', { once = true, callback = function()
  co = coroutine.create(main)
  resume()
end })
