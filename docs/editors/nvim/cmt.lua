-- cmt.lua — Neovim support for .cmt files: filetype detection and the
-- cmtc language server (diagnostics, hover, go to definition, symbols,
-- completion with <C-x><C-o>, formatting, and on Neovim 0.10 and later
-- inlay hints with the optimizer's choices for `?`).
--
-- Use it from init.lua with   dofile('/path/to/cmt.lua')
-- or copy it to ~/.config/nvim/plugin/cmt.lua.  Set vim.g.cmtc_path first
-- when cmtc is not on PATH.
--
-- Works with Neovim 0.7 (Debian bookworm's 0.7.2, which has no
-- vim.lsp.start: one client is started with vim.lsp.start_client and each
-- .cmt buffer is attached to it on FileType) and with later versions
-- (vim.lsp.start, which reuses a client per root folder by itself).

local function cmtc_cmd()
  return { vim.g.cmtc_path or 'cmtc', 'lsp' }
end

-- The folder holding .git above the file, or the file's own folder.
local function root_dir(bufnr)
  local file = vim.api.nvim_buf_get_name(bufnr)
  local dir = vim.fn.fnamemodify(file, ':p:h')
  local git = vim.fn.finddir('.git', dir .. ';')
  if git ~= '' then
    return vim.fn.fnamemodify(git, ':p:h:h')
  end
  return dir
end

local group = vim.api.nvim_create_augroup('cmt', { clear = true })

vim.api.nvim_create_autocmd({ 'BufRead', 'BufNewFile' }, {
  group = group,
  pattern = '*.cmt',
  callback = function()
    vim.bo.filetype = 'cmt'
  end,
})

local client_id = nil -- Neovim 0.7: one shared client

-- For each .cmt buffer the client attaches to: completion through the
-- server with <C-x><C-o> (without 'omnifunc' it fails with E764), and
-- inlay hints where Neovim has them (0.10: vim.lsp.inlay_hint.enable).
local function on_attach(client, bufnr)
  vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
  local hints = vim.lsp.inlay_hint
  if type(hints) == 'table' and hints.enable and client.server_capabilities.inlayHintProvider then
    hints.enable(true, { bufnr = bufnr })
  end
end

vim.api.nvim_create_autocmd('FileType', {
  group = group,
  pattern = 'cmt',
  callback = function(args)
    local bufnr = args.buf
    vim.bo[bufnr].commentstring = '// %s'
    vim.bo[bufnr].shiftwidth = 2
    vim.bo[bufnr].expandtab = true
    local config = {
      name = 'cmtc',
      cmd = cmtc_cmd(),
      root_dir = root_dir(bufnr),
      on_attach = on_attach,
    }
    if vim.lsp.start then
      vim.lsp.start(config, { bufnr = bufnr })
      return
    end
    if client_id == nil or vim.lsp.get_client_by_id(client_id) == nil then
      client_id = vim.lsp.start_client(config)
    end
    if client_id then
      vim.lsp.buf_attach_client(bufnr, client_id)
    end
  end,
})
