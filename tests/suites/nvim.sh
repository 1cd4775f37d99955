#!/bin/sh
# A real editor: Neovim --headless with the documented configuration
# (docs/editors/nvim/cmt.lua) opens a .cmt file with a mistake on line 4;
# the diagnostic must arrive from `cmtc lsp` at that line with its code,
# then hover, go to definition and formatting go through the same client.
CMTC=${CMTC:-build/cmtc}
case $CMTC in /*) ;; *) CMTC=$(pwd)/$CMTC ;; esac
if ! command -v nvim >/dev/null 2>&1; then
    echo "SKIP: nvim: Neovim is not installed"
    exit 0
fi
tmp=$(mktemp -d) || exit 1
trap '[ -n "$KEEP" ] && cat "$tmp/out"; rm -rf "$tmp"' EXIT
cat >"$tmp/bad.cmt" <<'CMT'
// a mistake on line 4
const A = 4;
const B = A * 2;
const C = B + missing_name;
CMT
cat >"$tmp/check.lua" <<'LUA'
local out = {}
local function emit(s) table.insert(out, s) end
local ok = vim.wait(15000, function() return #vim.diagnostic.get(0) > 0 end, 50)
if not ok then emit('no diagnostics') end
for _, d in ipairs(vim.diagnostic.get(0)) do
  emit(string.format('diag %d %s %s', d.lnum + 1, tostring(d.code or
    (d.user_data and d.user_data.lsp and d.user_data.lsp.code)), d.message:gsub('\n.*', '')))
end
-- hover on `A` in line 3 (0-based line 2, column 10)
local params = {
  textDocument = { uri = vim.uri_from_bufnr(0) },
  position = { line = 2, character = 10 },
}
local res = vim.lsp.buf_request_sync(0, 'textDocument/hover', params, 5000)
local hover = 'none'
for _, r in pairs(res or {}) do
  if r.result and r.result.contents then hover = r.result.contents.value:gsub('\n', ' ') end
end
emit('hover ' .. hover)
-- go to definition of that `A`: line 2
local defs = vim.lsp.buf_request_sync(0, 'textDocument/definition', params, 5000)
local def = 'none'
for _, r in pairs(defs or {}) do
  local loc = r.result and (r.result.range and r.result or r.result[1])
  if loc then def = tostring(loc.range.start.line + 1) .. ':' .. tostring(loc.range.start.character) end
end
emit('definition ' .. def)
-- formatting through the server: the spacing of line 3 is canonical after
vim.api.nvim_buf_set_lines(0, 2, 3, false, { 'const   B=A*2;' })
if vim.lsp.buf.format then
  vim.lsp.buf.format({ timeout_ms = 5000 })
else
  vim.lsp.buf.formatting_sync(nil, 5000)
end
emit('line3 ' .. vim.api.nvim_buf_get_lines(0, 2, 3, false)[1])
vim.fn.writefile(out, vim.env.NVIM_OUT)
vim.cmd('qa!')
LUA
NVIM_OUT="$tmp/out" timeout 60 nvim --headless --clean \
    -c "let g:cmtc_path = '$CMTC'" \
    -c "luafile docs/editors/nvim/cmt.lua" \
    -c "edit $tmp/bad.cmt" \
    -c "luafile $tmp/check.lua" >"$tmp/log" 2>&1
rc=$?
if [ ! -f "$tmp/out" ]; then
    echo "FAIL: nvim_diagnostic: Neovim wrote nothing (exit $rc): $(head -c 300 "$tmp/log" | tr '\n' ' ')"
    echo "FAIL: nvim_hover: Neovim wrote nothing"
    echo "FAIL: nvim_definition: Neovim wrote nothing"
    echo "FAIL: nvim_formatting: Neovim wrote nothing"
    exit 1
fi
status=0
if grep -q '^diag 4 E0201 unknown name `missing_name`' "$tmp/out"; then
    echo "PASS: nvim_diagnostic"
else
    echo "FAIL: nvim_diagnostic: got '$(grep -m1 '^diag\|^no diag' "$tmp/out")', want line 4, E0201"
    status=1
fi
if grep -q '^hover .*const A = 4' "$tmp/out"; then
    echo "PASS: nvim_hover"
else
    echo "FAIL: nvim_hover: got '$(grep -m1 '^hover' "$tmp/out")'"
    status=1
fi
if grep -qx 'definition 2:6' "$tmp/out"; then
    echo "PASS: nvim_definition"
else
    echo "FAIL: nvim_definition: got '$(grep -m1 '^definition' "$tmp/out")', want 2:6"
    status=1
fi
if grep -qx 'line3 const B = A \* 2;' "$tmp/out"; then
    echo "PASS: nvim_formatting"
else
    echo "FAIL: nvim_formatting: got '$(grep -m1 '^line3' "$tmp/out")'"
    status=1
fi
exit $status
