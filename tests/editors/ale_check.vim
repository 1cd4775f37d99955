" ale_check.vim — sourced by tests/suites/vim.sh in Vim (in a pseudo-
" terminal) started with the documented recipe (ALE and
" docs/editors/vim/cmt.vim), the current buffer an example with a misspelt
" statement on line 34.  Steps run from a timer, each when the editor has
" done the previous one, as a user at the keyboard would wait; what Vim
" shows is written one fact per line to $CMT_OUT.

let s:out = []
set hidden
let s:example = bufnr('')
function! s:Emit(text) abort
  call add(s:out, substitute(a:text, '\n', ' ', 'g'))
endfunction

" The preview window's text (ALEHover shows there with g:ale_hover_to_preview).
function! s:PreviewText() abort
  for l:w in range(1, winnr('$'))
    if getwinvar(l:w, '&previewwindow')
      return join(getbufline(winbufnr(l:w), 1, '$'), ' ')
    endif
  endfor
  return ''
endfunction

" Each step: [what, condition to wait for (an expression), action once it holds].
let s:step = 0
let s:started = reltime()
let s:steps = []

function! s:Diagnostics() abort
  for l:d in ale#engine#GetLoclist(s:example)
    call s:Emit(printf('diag %d:%d %s %s %s', l:d.lnum, l:d.col, l:d.type, get(l:d, 'code', '-'), l:d.text))
  endfor
  call s:Emit('omnifunc ' . &l:omnifunc)
  let g:ale_hover_to_preview = 1
  call cursor(31, stridx(getline(31), 'comet_edge') + 1)
  ALEHover
endfunction
call add(s:steps, ['diagnostics', '!empty(ale#engine#GetLoclist(' . s:example . '))', function('s:Diagnostics')])

function! s:Hover() abort
  call s:Emit('hover ' . s:PreviewText())
  pclose
  call cursor(31, stridx(getline(31), 'gemm_softmax') + 1)
  ALEGoToDefinition
endfunction
call add(s:steps, ['hover', 's:PreviewText() !=# ""', function('s:Hover')])

function! s:Definition() abort
  call s:Emit(printf('definition %s:%d', expand('%:p'), line('.')))
  execute 'buffer' s:example
  let s:before = getline(1, '$')
  call setline(33, '  tile   GLB:m  64 ;')
  ALEFix
endfunction
call add(s:steps, ['definition', 'bufnr("") != ' . s:example, function('s:Definition')])

function! s:Formatted() abort
  call s:Emit('line33 ' . getline(33))
  call s:Emit('formatted ' . (getline(1, '$') ==# s:before ? 'true' : 'false'))
  " The quick fix for `sm` (did you mean `s`?): ALE lists the server's
  " actions and asks for a number.
  call cursor(34, stridx(getline(34), 'sm') + 1)
  let v:errmsg = ''
  ALECodeAction
endfunction
call add(s:steps, ['formatting', 'getline(33) !=# "  tile   GLB:m  64 ;"', function('s:Formatted')])

" ALE's prompt (input()) is up: the first action is chosen.  Or ALE said
" that the server offered none: the next steps go on.
let s:no_actions = 0
function! s:LastMessage() abort
  return get(split(execute('messages'), "\n"), -1, '')
endfunction
function! s:ChooseAction() abort
  if mode() ==# 'c'
    call feedkeys("1\<CR>", 't')
  else
    let s:no_actions = 1
    call s:Emit('code actions: ' . s:LastMessage())
  endif
endfunction
call add(s:steps, ['the code action prompt', 'mode() ==# "c" || s:LastMessage() =~# "No code actions"',
      \ function('s:ChooseAction')])

function! s:Fixed() abort
  call s:Emit('line34 ' . getline(34))
  execute 'edit' fnameescape($CMT_USE)
  let s:use = bufnr('')
  ALELint
endfunction
call add(s:steps, ['the quick fix', 's:no_actions || getline(34) !~# "sm"', function('s:Fixed')])

" <C-x><C-o> once the server has checked the new buffer; then the
" std.ops.gemm item is chosen from the menu with <C-n> and <C-y>.
function! s:Complete() abort
  call s:Emit('use_omnifunc ' . &l:omnifunc)
  set completeopt=menuone,noinsert,noselect
  let v:errmsg = ''
  call cursor(1, 1)
  call feedkeys("A\<C-x>\<C-o>", 't')
endfunction
call add(s:steps, ['use buffer checked', '!ale#engine#IsCheckingBuffer(s:use) && has_key(g:ale_buffer_info, s:use)', function('s:Complete')])

function! s:Choose() abort
  let l:items = complete_info(['items']).items
  let l:index = -1
  for l:i in range(len(l:items))
    if l:items[l:i].word =~# '\v(^|\.)ops\.gemm$'
      let l:index = l:i
      break
    endif
  endfor
  call s:Emit(printf('completion %d items, %s', len(l:items), l:index < 0 ? 'none for std.ops.gemm' : 'chose ' . l:items[l:index].word))
  call feedkeys((l:index < 0 ? '' : repeat("\<C-n>", l:index + 1) . "\<C-y>") . "\<Esc>", 't')
endfunction
call add(s:steps, ['completion menu', 'pumvisible()', function('s:Choose')])

function! s:Done() abort
  call s:Emit('use_line ' . getline(1))
  call s:Emit('errmsg ' . v:errmsg)
endfunction
call add(s:steps, ['back in Normal mode', 'mode() ==# "n"', function('s:Done')])

function! s:Tick(timer) abort
  if s:step >= len(s:steps)
    call timer_stop(a:timer)
    call writefile(s:out, $CMT_OUT)
    qa!
  endif
  let [l:what, l:cond, l:Action] = s:steps[s:step]
  if eval(l:cond)
    let s:step += 1
    let s:started = reltime()
    try
      call l:Action()
    catch
      call s:Emit('error in ' . l:what . ': ' . v:exception)
      let s:step = len(s:steps)
    endtry
  elseif reltimefloat(reltime(s:started)) > 15
    call s:Emit('timeout waiting for ' . l:what . ' (mode ' . mode() . ', errmsg ' . v:errmsg . ', messages ' . join(split(execute('messages'), "\n")[-2:], ' | ') . ')')
    let s:step = len(s:steps)
  endif
endfunction

call timer_start(50, function('s:Tick'), {'repeat': -1})
