-- nvim_check.lua — run by tests/suites/nvim.sh inside `nvim --headless`
-- started with the documented configuration (docs/editors/nvim/cmt.lua as
-- the init file), the current buffer being an example with a mistake on
-- line 34 (`fuse C, mx, e, sm, D at GLB;`).  Writes what Neovim shows, one
-- fact per line, to $CMT_OUT; the suite compares.
local out = {}
local function emit(s) table.insert(out, s) end
local function finish()
  vim.fn.writefile(out, vim.env.CMT_OUT)
  vim.cmd('qa!')
end
local function oneline(s) return (tostring(s):gsub('\n.*', '')) end

local function attached(bufnr)
  if vim.lsp.get_clients then return #vim.lsp.get_clients({ bufnr = bufnr }) > 0 end
  return not vim.tbl_isempty(vim.lsp.buf_get_clients(bufnr))
end

local function request(method, params)
  local res = vim.lsp.buf_request_sync(0, method, params, 10000)
  for _, r in pairs(res or {}) do
    if r.result then return r.result end
  end
end

-- Diagnostics, as vim.diagnostic holds them.
if not vim.wait(15000, function() return #vim.diagnostic.get(0) > 0 end, 50) then
  emit('no diagnostics')
end
for _, d in ipairs(vim.diagnostic.get(0)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code)
  emit(string.format('diag %d:%d %s %s', d.lnum + 1, d.col + 1, tostring(code), oneline(d.message)))
end

-- The buffer options the configuration sets on attach.
emit('omnifunc ' .. vim.bo.omnifunc)
local hints = vim.lsp.inlay_hint
if type(hints) == 'table' and hints.is_enabled then
  emit('inlay ' .. tostring(hints.is_enabled({ bufnr = 0 })))
elseif _G.cmt_test_inlay_calls then
  -- Neovim before 0.10: the suite's stand-in for vim.lsp.inlay_hint.enable
  -- recorded what the configuration asked of it.
  local c = _G.cmt_test_inlay_calls[1]
  emit('inlay ' .. (c and string.format('%s bufnr=%s', tostring(c[1]), tostring(c[2].bufnr == vim.api.nvim_get_current_buf())) or 'not enabled'))
end

-- Hover on `comet_edge` in line 31 (`... on comet_edge {`).
local line31 = vim.api.nvim_buf_get_lines(0, 30, 31, false)[1]
local here = { textDocument = { uri = vim.uri_from_bufnr(0) },
  position = { line = 30, character = line31:find('comet_edge', 1, true) } }
local hover = request('textDocument/hover', here)
emit('hover ' .. (hover and hover.contents and hover.contents.value or 'none'):gsub('\n', ' '))

-- Go to definition of `gemm_softmax` in that line: the standard library.
here.position.character = line31:find('gemm_softmax', 1, true)
local def = request('textDocument/definition', here)
def = def and (def.uri and def or def[1])
emit('definition ' .. (def and (vim.uri_to_fname(def.uri or def.targetUri) .. ':' ..
  ((def.range or def.targetSelectionRange).start.line + 1)) or 'none'))

-- Formatting through the server puts a mangled line back.
local before = vim.api.nvim_buf_get_lines(0, 0, -1, false)
vim.api.nvim_buf_set_lines(0, 32, 33, false, { '  tile   GLB:m  64 ;' })
if vim.lsp.buf.format then
  vim.lsp.buf.format({ timeout_ms = 10000 })
else
  vim.lsp.buf.formatting_sync(nil, 10000)
end
local after = vim.api.nvim_buf_get_lines(0, 0, -1, false)
emit('line33 ' .. after[33])
emit('formatted ' .. tostring(table.concat(before, '\n') == table.concat(after, '\n')))

-- Completion with <C-x><C-o> after `use std.` in another buffer, accepting
-- the std.ops.gemm item from the popup menu.
vim.cmd('edit ' .. vim.fn.fnameescape(vim.env.CMT_USE))
local use_buf = vim.api.nvim_get_current_buf()
if not vim.wait(10000, function() return attached(use_buf) end, 50) then emit('use buffer not attached') end
emit('use_omnifunc ' .. vim.bo.omnifunc)
vim.o.completeopt = 'menuone,noinsert,noselect'
vim.v.errmsg = ''
vim.api.nvim_win_set_cursor(0, { 1, 0 })
vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('A<C-x><C-o>', true, false, true), 'n', false)

local deadline = vim.loop.now() + 10000
local timer = vim.loop.new_timer()
local function done(what)
  timer:stop()
  emit(what)
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes('<Esc>', true, false, true), 'n', false)
  vim.defer_fn(function()
    emit('use_line ' .. vim.api.nvim_buf_get_lines(use_buf, 0, 1, false)[1])
    emit('errmsg ' .. vim.v.errmsg)
    finish()
  end, 100)
end
timer:start(50, 50, vim.schedule_wrap(function()
  if not timer:is_active() then return end
  if vim.fn.pumvisible() == 1 then
    local items = vim.fn.complete_info({ 'items' }).items
    for i, it in ipairs(items) do
      if it.word:match('ops%.gemm$') then
        vim.api.nvim_select_popupmenu_item(i - 1, true, true, {})
        done('completion ' .. #items .. ' items, chose ' .. it.word)
        return
      end
    end
    done('completion ' .. #items .. ' items, none for std.ops.gemm')
  elseif vim.loop.now() > deadline then
    done('completion no popup menu (mode ' .. vim.fn.mode() .. ', errmsg ' .. vim.v.errmsg .. ')')
  end
end))
