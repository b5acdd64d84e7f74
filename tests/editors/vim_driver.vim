" Vim driver for tests/editors/test_ale_youcompleteme.py: loaded with -S after the user's vimrc (docs/editors.md's ALE or
" YouCompleteMe configuration) and file.py, in a pseudo-terminal. It acts as the user, through keys
" (feedkeys() with 't': typed, so Vim's main loop turns as it does for a user): it asks for a completion
" after FLOWEDIT_VIM_AFTER, selects FLOWEDIT_VIM_TARGET and picks "Rewrite selection…" from the client's
" numbered prompt (read off the screen), waits idle, then moves the cursor (l, h) every 150 ms as a user
" would while the rest streams in; then the revert and the interrupt, through the code actions flowedit
" offers for them; then "Review file" from the code actions (until the client shows FLOWEDIT_VIM_FINDINGS
" findings), and "Apply fix: …" on the line of FLOWEDIT_VIM_FIX where the client offers it. Every buffer
" state is recorded. Writes FLOWEDIT_VIM_SUMMARY (JSON) and quits.
"
" Env: FLOWEDIT_VIM_CLIENT (ale | ycm), FLOWEDIT_VIM_TARGET, FLOWEDIT_VIM_AFTER, FLOWEDIT_VIM_FINDINGS,
" FLOWEDIT_VIM_FIX, FLOWEDIT_VIM_SUMMARY.

let s:client = $FLOWEDIT_VIM_CLIENT
let s:t0 = reltime()
let s:summary = {'vim': printf('%d.%d.%d', v:version / 100, v:version % 100, v:versionlong % 10000),
      \ 'client': s:client, 'errors': [], 'log': [], 'prompts': [], 'states': [], 'not_offered': []}
let s:steps = []
let s:step_started = 0.0

function! s:Ms() abort
  return reltimefloat(reltime(s:t0)) * 1000
endfunction

function! s:Say(msg) abort
  call add(s:summary.log, printf('%8.1f %s', s:Ms(), a:msg))
endfunction

function! s:Text() abort
  return join(getline(1, '$'), "\n") . "\n"
endfunction

" every distinct buffer text, with when it was seen
function! s:Watch(timer) abort
  let l:text = s:Text()
  if empty(s:summary.states) || s:summary.states[-1].text isnot# l:text
    call add(s:summary.states, {'ms': s:Ms(), 'text': l:text})
  endif
endfunction

" the screen's rows: what the user reads
function! s:Screen() abort
  return map(range(1, &lines), {_, r -> join(map(range(1, &columns), {_, c -> screenstring(r, c)}), '')})
endfunction

" the user reads the client's numbered list and types the number of `title` (ALE: '3) title', YCM: '3: title');
" `optional`: when the list shows without it, the user cancels at once and it goes into `not_offered`
function! s:Pick(title, ...) abort
  let s:picking = a:title
  let s:pick_optional = get(a:, 1, 0)
  let s:pick_ticks = 0
  let s:list_ticks = 0
  call timer_start(20, function('s:PickTick'), {'repeat': -1})
endfunction

function! s:Cancel(timer, rows, why) abort
  call timer_stop(a:timer)
  call add(s:summary.prompts, filter(copy(a:rows), {_, r -> r =~# '\S'}))
  call add(a:why is# 'optional' ? s:summary.not_offered : s:summary.errors, 'not offered: ' . s:picking)
  call feedkeys("\<CR>", 't')
  let s:picking = ''
endfunction

function! s:PickTick(timer) abort
  let l:rows = s:Screen()
  for l:row in l:rows
    let l:n = matchstr(l:row, '^\s*\zs\d\+\ze[):] ' . escape(s:picking, '\.*[]~'))
    if !empty(l:n)
      call timer_stop(a:timer)
      call add(s:summary.prompts, filter(copy(l:rows), {_, r -> r =~# '\S'}))
      call s:Say('picks ' . l:n . ' for ' . s:picking)
      call feedkeys(l:n . "\<CR>", 't')
      let s:picking = ''
      return
    endif
  endfor
  let s:pick_ticks += 1
  " (a list is up without it: 200 ms for the list to be drawn whole)
  let s:list_ticks += s:pick_optional && !empty(filter(copy(l:rows), {_, r -> r =~# '^\s*\d\+[):] '}))
  if s:list_ticks > 10
    call s:Cancel(a:timer, l:rows, 'optional')
  elseif s:pick_ticks > 250  " 5 s: not offered; the user cancels the prompt
    call s:Cancel(a:timer, l:rows, 'error')
  endif
endfunction

function! s:Select(target) abort
  let [l:line, l:col] = searchpos('\V' . escape(a:target, '\'), 'cnw')
  call feedkeys(printf("\<Esc>:call cursor(%d, %d)\<CR>v%dl\<Esc>", l:line, l:col, len(a:target) - 1), 't')
endfunction

function! s:CodeAction(range) abort
  let l:range = a:range ? "'<,'>" : ''
  call feedkeys(':' . l:range . (s:client is# 'ale' ? 'ALECodeAction' : 'YcmCompleter FixIt') . "\<CR>", 't')
endfunction

" ---------------------------------------------------------------- the steps: each returns 1 when done
let s:expected = ''
let s:original = ''
let s:keys = 0

function! s:Ready() abort
  if s:client is# 'ale'
    return get(s:, 'ale_ready', 0)
  endif
  return py3eval('__import__("ycm.vimsupport").vimsupport and ycm_state.IsServerReady()')
        \ && py3eval('ycm_state.NativeFiletypeCompletionUsable()')
endfunction

function! s:AleStarted(linter, details) abort
  let s:ale_ready = 1
endfunction

function! s:Complete() abort
  let [l:line, l:col] = searchpos('\V' . escape($FLOWEDIT_VIM_AFTER, '\') . '\zs', 'cw')
  call cursor(l:line, l:col)
  set completeopt=menuone,noinsert  " the user's: the menu even for one item, nothing inserted before a choice
  call feedkeys('i' . s:CompletionKey(), 't')
  return 1
endfunction

function! s:CompletionKey() abort
  return s:client is# 'ale' ? "\<C-x>\<C-o>" : "\<C-Space>"
endfunction

" (asked again each 1.5 s, as a user would: the first answer may come before the model's)
function! s:Completed() abort
  if !pumvisible() && s:Elapsed() > 1500 * get(s:, 'asked', 1)
    let s:asked = get(s:, 'asked', 1) + 1
    call feedkeys(s:CompletionKey(), 't')
  endif
  let l:items = complete_info(['items']).items
  if pumvisible() && !empty(l:items)
    let s:summary.completions = map(copy(l:items), {_, i -> i.word})
    call feedkeys("\<C-e>\<Esc>", 't')
    return 1
  endif
  return s:Elapsed() > 8000 ? s:Give('completions', []) : 0
endfunction

function! s:Give(key, value) abort
  let s:summary[a:key] = a:value
  call s:Say('no ' . a:key)
  call feedkeys("\<C-e>\<Esc>", 't')
  return 1
endfunction

function! s:Elapsed() abort
  return s:Ms() - s:step_started
endfunction

function! s:Rewrite() abort
  let s:original = s:Text()
  let s:summary.original = s:original
  let s:rewrite_from = len(s:summary.states)
  call s:Select($FLOWEDIT_VIM_TARGET)
  call s:CodeAction(1)
  call s:Pick('Rewrite selection…')
  return 1
endfunction

" the user waits, idle, 2 s
function! s:Idle() abort
  if s:Elapsed() < 2000
    return 0
  endif
  let s:summary.idle_states = len(s:summary.states) - s:rewrite_from
  return 1
endfunction

" then moves the cursor every 150 ms until the text is the rewritten one ($FLOWEDIT_VIM_REWRITTEN), or it
" stops changing for 1.5 s (ALE, which moves only on keys: 4 s — a busy machine lags), or 8 s
function! s:Keys() abort
  if s:Elapsed() >= 150 * s:keys
    let s:keys += 1
    call feedkeys(s:keys % 2 ? 'l' : 'h', 't')
  endif
  let l:quiet = s:Ms() - s:summary.states[-1].ms
  let l:patience = s:client is# 'ale' ? 4000 : 1500
  if s:Text() is# $FLOWEDIT_VIM_REWRITTEN || (l:quiet > l:patience && s:Elapsed() > 1500) || s:Elapsed() > 8000
    let s:summary.keys = s:keys
    let s:summary.rewritten = s:Text()
    let s:summary.rewrite_states = len(s:summary.states) - s:rewrite_from
    if s:summary.rewrite_states == 0  " nothing landed: nothing to revert or stop; on to the review
      call filter(s:steps, {i, st -> i == 0 || index(['review', 'reviewed', 'fix', 'fixed', 'finish'], st[0]) >= 0})
    endif
    return 1
  endif
  return 0
endfunction

function! s:Action(title) abort
  call feedkeys("\<Esc>gg", 't')
  call s:CodeAction(0)
  call s:Pick(a:title)
  let s:keys = 0
  return 1
endfunction

function! s:Settle(key) abort
  if s:Elapsed() >= 150 * s:keys
    let s:keys += 1
    call feedkeys(s:keys % 2 ? 'l' : 'h', 't')
  endif
  if s:Ms() - s:summary.states[-1].ms > 1500 && s:Elapsed() > 1500 || s:Elapsed() > 8000
    let s:summary[a:key] = s:Text()
    return 1
  endif
  return 0
endfunction

" a second rewrite, stopped after its first edit
function! s:RewriteAgain() abort
  let s:rewrite_from = len(s:summary.states)
  call s:Select($FLOWEDIT_VIM_TARGET)
  call s:CodeAction(1)
  call s:Pick('Rewrite selection…')
  return 1
endfunction

function! s:FirstEdit() abort
  if len(s:summary.states) > s:rewrite_from
    let s:summary.interrupted_at = s:Text()
    return 1
  endif
  return s:Elapsed() > 5000
endfunction

" ---------------------------------------------------------------- the review
" what the client shows of flowedit's diagnostics: [line, text, type] each, in line order
function! s:Findings() abort
  if s:client is# 'ale'
    let l:items = filter(copy(ale#engine#GetLoclist(bufnr(''))), {_, d -> d.linter_name is# 'flowedit'})
    return sort(map(l:items, {_, d -> [d.lnum, d.text, d.type]}))
  endif
  return sort(py3eval('[[d["location"]["line_num"], d["text"], d["kind"]] for d in '
        \ . 'ycm_state.CurrentBuffer()._diag_interface._diagnostics]'))
endfunction

" the findings of the review, once there are $FLOWEDIT_VIM_FINDINGS
function! s:Reviewed() abort
  let l:shown = s:Findings()
  if len(l:shown) < str2nr($FLOWEDIT_VIM_FINDINGS)
    return 0
  endif
  let s:summary.findings = l:shown
  let s:summary.reviewed = s:Text()
  return 1
endfunction

" "Apply fix: …" on the line of $FLOWEDIT_VIM_FIX, if the client offers it
function! s:Fix() abort
  let s:before_fix = s:Text()
  let [l:line, l:col] = searchpos('\V' . escape($FLOWEDIT_VIM_FIX, '\'), 'cnw')
  call feedkeys(printf("\<Esc>:call cursor(%d, %d)\<CR>", l:line, l:col), 't')
  call s:CodeAction(0)
  call s:Pick('Apply fix: ', 1)
  return 1
endfunction

" the fix landed and its finding went (or it was not offered)
function! s:Fixed() abort
  if index(s:summary.not_offered, 'not offered: Apply fix: ') >= 0
    return 1
  endif
  let l:shown = s:Findings()
  if s:Text() is# s:before_fix || len(l:shown) >= len(s:summary.findings)
    return 0
  endif
  let s:summary.fixed = s:Text()
  let s:summary.after_fix = l:shown
  return 1
endfunction

function! s:Finish() abort
  let s:summary.text = s:Text()
  call writefile([json_encode(s:summary)], $FLOWEDIT_VIM_SUMMARY)
  qa!
endfunction

function! s:Tick(timer) abort
  if empty(s:steps)
    return
  endif
  let [l:name, l:Step, l:timeout] = s:steps[0]
  if get(s:, 'picking', '') isnot# ''  " a prompt is up: wait for the user's answer
    return
  endif
  try
    let l:done = l:Step()
  catch
    call add(s:summary.errors, l:name . ': ' . v:exception . ' ' . v:throwpoint)
    let l:done = 1
  endtry
  if !l:done && s:Elapsed() > l:timeout
    call add(s:summary.errors, printf('%s: waited %d ms in vain', l:name, l:timeout))
    let l:done = 1
  endif
  if l:done
    call s:Say('done: ' . l:name)
    call remove(s:steps, 0)
    let s:step_started = s:Ms()
  endif
endfunction

let s:steps = [
      \ ['ready', function('s:Ready'), 30000],
      \ ['complete', function('s:Complete'), 1000],
      \ ['completed', function('s:Completed'), 10000],
      \ ['rewrite', function('s:Rewrite'), 1000],
      \ ['idle', function('s:Idle'), 5000],
      \ ['keys', function('s:Keys'), 10000],
      \ ['revert', function('s:Action', ['FlowEdit: Revert the last rewrite']), 1000],
      \ ['reverted', function('s:Settle', ['reverted']), 10000],
      \ ['rewrite again', function('s:RewriteAgain'), 1000],
      \ ['first edit', function('s:FirstEdit'), 6000],
      \ ['interrupt', function('s:Action', ['FlowEdit: Stop the rewrite']), 1000],
      \ ['interrupted', function('s:Settle', ['interrupted']), 10000],
      \ ['review', function('s:Action', ['Review file']), 1000],
      \ ['reviewed', function('s:Reviewed'), 10000],
      \ ['fix', function('s:Fix'), 1000],
      \ ['fixed', function('s:Fixed'), 10000],
      \ ['finish', function('s:Finish'), 1000],
      \ ]

if s:client is# 'ale'
  call ale#lsp_linter#StartLSP(bufnr(''), ale#linter#Get(&filetype)[0], function('s:AleStarted'))
endif
call timer_start(10, function('s:Watch'), {'repeat': -1})
call timer_start(20, function('s:Tick'), {'repeat': -1})
