-- nvim_prelude.lua — loaded by tests/suites/nvim.sh before the init file.
-- Neovim before 0.10 has no vim.lsp.inlay_hint: a stand-in records the
-- calls the configuration makes, so that the suite can check on 0.7 that
-- cmt.lua would enable hints for the buffer on a Neovim that has them.
-- On 0.10 and later nothing is replaced and the real state is checked.
if vim.lsp.inlay_hint == nil then
  _G.cmt_test_inlay_calls = {}
  vim.lsp.inlay_hint = {
    enable = function(enable, filter)
      table.insert(_G.cmt_test_inlay_calls, { enable, filter or {} })
    end,
  }
end
