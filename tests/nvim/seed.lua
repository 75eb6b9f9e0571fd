-- A rule conflict fixed in the editor: drives Neovim's built-in LSP client (0.7+) against the
-- servelint server on tests/nvim/seed.sh (SL101: --prefill-only-disable-kv-cache together with
-- --enable-hisparse) and writes what it saw to a JSON file for tests/test_nvim_seed.py to check.
--
-- Environment:
--   SERVELINT_NVIM_FILE    the shell script to open (a copy of seed.sh; it is saved after the fix)
--   SERVELINT_NVIM_ROOT    root_dir for the client (the test's tmp dir)
--   SERVELINT_NVIM_OUT     where to write the JSON report
--   SERVELINT_NVIM_PYTHON  the Python that runs `-m servelint lsp`
--
-- As in e2e.lua the script never asserts: every step records its result (or its error) and the
-- pytest side decides. It always ends with `qa!`, even when a step raises.

local lib = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/lib.lua")
local WAIT_MS = lib.WAIT_MS
local FIX_ALL_KIND = "source.fixAll.servelint"

local file = assert(os.getenv("SERVELINT_NVIM_FILE"), "SERVELINT_NVIM_FILE not set")
local root = assert(os.getenv("SERVELINT_NVIM_ROOT"), "SERVELINT_NVIM_ROOT not set")
local out_path = assert(os.getenv("SERVELINT_NVIM_OUT"), "SERVELINT_NVIM_OUT not set")
local python = assert(os.getenv("SERVELINT_NVIM_PYTHON"), "SERVELINT_NVIM_PYTHON not set")

local report = { steps = {}, errors = {}, server_messages = {} }

local function step(name)
  table.insert(report.steps, name)
end

-- Diagnostics as Neovim holds them, with their related information and fix count.
local function snapshot_diagnostics(bufnr)
  return lib.snapshot_diagnostics(bufnr, function(d, entry)
    local lsp_data = (d.user_data and d.user_data.lsp) or {}
    local related = {}
    for _, r in ipairs(lsp_data.relatedInformation or {}) do
      table.insert(related, { line = r.location.range.start.line, message = r.message })
    end
    local data = lsp_data.data
    entry.related = related
    entry.fix_count = (type(data) == "table" and type(data.fixes) == "table") and #data.fixes or vim.NIL
  end)
end

local hover_markdown = lib.hover_markdown
local code_actions = lib.code_actions
local summarize_actions = lib.summarize_actions

-- The LSP diagnostic (as Neovim hands it back for a code action request) with this code and
-- vim severity on a line.
local function line_diagnostic(bufnr, client_id, line, code, severity)
  for _, d in ipairs(vim.lsp.diagnostic.get_line_diagnostics(bufnr, line, {}, client_id)) do
    if d.code == code and d.severity == severity then
      return d
    end
  end
end

-- Applies a workspace edit's text edits for `uri` to a scratch copy of `lines` and returns the
-- result, leaving the real buffer (and the server's view of it) untouched.
local function apply_to_copy(edit, uri, lines)
  local changes = (edit and edit.changes and edit.changes[uri]) or nil
  if not changes then
    error("workspace edit has no changes for " .. uri .. ": " .. vim.inspect(edit))
  end
  local scratch = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(scratch, 0, -1, false, lines)
  vim.lsp.util.apply_text_edits(changes, scratch, "utf-16")
  local result = vim.api.nvim_buf_get_lines(scratch, 0, -1, false)
  vim.api.nvim_buf_delete(scratch, { force = true })
  return result, changes
end

local function main()
  -- Open the script the way a user does, with filetype detection on.
  vim.cmd("filetype on")
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(bufnr)
  report.filetype = vim.bo[bufnr].filetype
  report.lines_original = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  step("opened")

  local publishes = {}
  local default_publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
  local function on_publish(err, result, ctx, config)
    table.insert(publishes, {
      version = result and result.version,
      count = result and result.diagnostics and #result.diagnostics,
    })
    return default_publish(err, result, ctx, config)
  end

  local client_id = lib.start_client(python, root, report, on_publish)
  vim.lsp.buf_attach_client(bufnr, client_id)
  local client = vim.lsp.get_client_by_id(client_id)

  if not vim.wait(WAIT_MS, function() return client.initialized end, 20) then
    error("server did not finish initialize within " .. WAIT_MS .. " ms")
  end
  step("initialized")

  -- 1. Diagnostics of the original text.
  if not vim.wait(WAIT_MS, function() return #vim.diagnostic.get(bufnr) > 0 end, 10) then
    error("no diagnostics within " .. WAIT_MS .. " ms of opening the file")
  end
  report.initial = snapshot_diagnostics(bufnr)
  step("initial diagnostics")

  -- 2./3. Hover on the flagged token and on the other flag of the conflict.
  report.hover_hisparse = hover_markdown(client, bufnr, 5, 8)   -- "--enable-hisparse"
  report.hover_prefill = hover_markdown(client, bufnr, 4, 10)   -- "--prefill-only-disable-kv-cache"
  step("hover")

  -- 5. Fix all, on the original text (before the quick fix changes it). Its edit is applied to a
  -- scratch copy so the real buffer stays as the user has it.
  local whole = {
    start = { line = 0, character = 0 },
    ["end"] = { line = vim.api.nvim_buf_line_count(bufnr), character = 0 },
  }
  local fix_all = code_actions(client, bufnr, whole, { diagnostics = {}, only = { FIX_ALL_KIND } })
  report.fix_all = summarize_actions(fix_all)
  if #fix_all >= 1 and fix_all[1].edit then
    local lines, edits = apply_to_copy(fix_all[1].edit, uri, report.lines_original)
    report.lines_after_fix_all = lines
    report.fix_all_edits = edits
  end
  step("fixAll")

  -- 4. Quick fixes, asked for with the diagnostic under the cursor as Neovim stores it.
  local err_diag = line_diagnostic(bufnr, client_id, 5, "SL101", vim.lsp.protocol.DiagnosticSeverity.Error)
  local hint_diag = line_diagnostic(bufnr, client_id, 4, "SL101", vim.lsp.protocol.DiagnosticSeverity.Hint)
  if not err_diag then
    error("no SL101 error diagnostic on line 5 in vim.lsp.diagnostic.get_line_diagnostics")
  end
  local actions = code_actions(client, bufnr, err_diag.range, { diagnostics = { err_diag } })
  report.quick_fixes = summarize_actions(actions)
  if hint_diag then
    report.hint_quick_fixes = summarize_actions(
      code_actions(client, bufnr, hint_diag.range, { diagnostics = { hint_diag } }))
  else
    report.hint_quick_fixes = vim.NIL -- no hint on line 4; the Python side reports it
  end
  step("quick fixes listed")

  local preferred
  for _, a in ipairs(actions) do
    if a.kind == "quickfix" and a.isPreferred and not preferred then
      preferred = a
    end
  end
  if not preferred or not preferred.edit then
    error("no preferred quickfix with an edit for SL101: " .. vim.inspect(actions))
  end
  report.preferred_title = preferred.title

  -- Apply it and wait for the diagnostics of the edited text (a publish for the new version).
  local version_before, version_after, pub = lib.apply_and_wait(
    bufnr, preferred.edit, function() return publishes end, 5)
  report.lines_after_fix = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  report.versions = { before = version_before, after = version_after }
  step("quick fix applied")
  report.publish_after_fix = pub
  report.after_fix = snapshot_diagnostics(bufnr)
  step("diagnostics after fix")

  -- Save what the user now has; the Python side runs `bash -n` on it.
  vim.cmd("write")
  report.saved = vim.api.nvim_buf_get_name(bufnr)
  report.modified_after_write = vim.bo[bufnr].modified
  step("written")

  vim.lsp.stop_client(client_id)
  vim.wait(2000, function() return client.is_stopped() end, 20)
end

lib.finish(main, report, out_path)
