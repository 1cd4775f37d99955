" cmt.vim — Vim support for .cmt files through ALE and the cmtc language
" server: diagnostics as you type, :ALEHover, :ALEGoToDefinition,
" :ALEDocumentSymbolSearch, completion with <C-x><C-o>, :ALECodeAction (quick
" fixes), and :ALEFix formatting with `cmtc fmt`.
"
" Needs Vim 8.2 or later (or Neovim) with ALE 3 (Debian: vim-ale).  In your
" vimrc, after loading ALE (`packadd! ale` for Debian's package, or your
" plugin manager):
"
"     let g:cmtc_path = '/path/to/cmtc/build/cmtc'   " when cmtc is not on PATH
"     source /path/to/cmtc/docs/editors/vim/cmt.vim
"
" g:cmtc_include_dirs (a list) adds -I folders for the server and the
" formatter.

augroup cmt
  autocmd!
  autocmd BufRead,BufNewFile *.cmt setfiletype cmt
  " Comments and the 2-space layout of `cmtc fmt`; completion through ALE.
  autocmd FileType cmt setlocal commentstring=//\ %s comments=s1:/*,mb:*,ex:*/,://
        \ shiftwidth=2 softtabstop=2 expandtab omnifunc=ale#completion#OmniFunc
augroup END

function! s:CmtcIncludes() abort
  return join(map(copy(get(g:, 'cmtc_include_dirs', [])), {_, d -> ' -I ' . ale#Escape(d)}), '')
endfunction

function! s:CmtcExecutable(buffer) abort
  return get(g:, 'cmtc_path', 'cmtc')
endfunction

function! s:CmtcLspCommand(buffer) abort
  return '%e lsp' . s:CmtcIncludes()
endfunction

" The folder holding .git above the file, or the file's own folder.
function! s:CmtcRoot(buffer) abort
  let l:file = fnamemodify(bufname(a:buffer), ':p')
  let l:git = finddir('.git', fnamemodify(l:file, ':h') . ';')
  return empty(l:git) ? fnamemodify(l:file, ':h') : fnamemodify(l:git, ':p:h:h')
endfunction

call ale#linter#Define('cmt', {
\   'name': 'cmtc',
\   'lsp': 'stdio',
\   'executable': function('s:CmtcExecutable'),
\   'command': function('s:CmtcLspCommand'),
\   'project_root': function('s:CmtcRoot'),
\})

" :ALEFix runs `cmtc fmt -` on the buffer (ALE has no LSP formatting).  On
" a syntax error the formatter prints nothing and the buffer is left as
" it is; the diagnostics say why.
function! CmtcFmtFixer(buffer) abort
  return {'command': ale#Escape(s:CmtcExecutable(a:buffer)) . ' fmt' . s:CmtcIncludes() . ' -'}
endfunction

call ale#fix#registry#Add('cmtc_fmt', 'CmtcFmtFixer', ['cmt'], 'the cmtc formatter (cmtc fmt)')
let g:ale_fixers = get(g:, 'ale_fixers', {})
let g:ale_fixers.cmt = get(g:ale_fixers, 'cmt', ['cmtc_fmt'])
