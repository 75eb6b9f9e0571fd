-- Drives Neovim's built-in LSP client (0.7+) against the servelint server, as a user would,
-- and writes what it saw to a JSON file for tests/test_nvim_e2e.py to check.
--
-- Environment:
--   SERVELINT_NVIM_FILE    the shell script to open
--   SERVELINT_NVIM_ROOT    root_dir for the client (the test's tmp dir)
--   SERVELINT_NVIM_OUT     where to write the JSON report
--   SERVELINT_NVIM_PYTHON  the Python that runs `-m servelint lsp`
--
-- The script never asserts: every step records its result (or its error) and the pytest
-- side decides. It always ends with `qa!`, even when a step raises.

local lib = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/lib.lua")
local WAIT_MS = lib.WAIT_MS

local file = assert(os.getenv("SERVELINT_NVIM_FILE"), "SERVELINT_NVIM_FILE not set")
local root = assert(os.getenv("SERVELINT_NVIM_ROOT"), "SERVELINT_NVIM_ROOT not set")
local out_path = assert(os.getenv("SERVELINT_NVIM_OUT"), "SERVELINT_NVIM_OUT not set")
local python = assert(os.getenv("SERVELINT_NVIM_PYTHON"), "SERVELINT_NVIM_PYTHON not set")

local report = { steps = {}, errors = {}, server_messages = {} }

local function now_ms()
  return vim.loop.hrtime() / 1e6
end

local function step(name)
  table.insert(report.steps, name)
end

local snapshot_diagnostics = lib.snapshot_diagnostics
local hover_markdown = lib.hover_markdown
local code_actions = lib.code_actions

local function main()
  -- 1. Open the script the way a user does, with filetype detection on.
  vim.cmd("filetype on")
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()
  report.filetype = vim.bo[bufnr].filetype
  step("opened")

  -- Every publishDiagnostics is timestamped before Neovim's own handler stores it.
  local publishes = {}
  local default_publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
  local function on_publish(err, result, ctx, config)
    table.insert(publishes, {
      at = now_ms(),
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

  -- Record when didChange actually leaves the client (Neovim debounces it).
  local did_change_at = {}
  local notify = client.notify
  client.notify = function(method, params)
    if method == "textDocument/didChange" then
      table.insert(did_change_at, { at = now_ms(), version = params.textDocument.version })
    end
    return notify(method, params)
  end

  if not vim.wait(WAIT_MS, function() return #vim.diagnostic.get(bufnr) > 0 end, 10) then
    error("no diagnostics within " .. WAIT_MS .. " ms of opening the file")
  end
  report.initial = snapshot_diagnostics(bufnr)
  step("initial diagnostics")

  -- 3. Hover on an option and on a flagged token.
  report.hover_port = hover_markdown(client, bufnr, 4, 4)        -- "--port"
  report.hover_finding = hover_markdown(client, bufnr, 2, 5)     -- "--tp_size" (SL002)
  step("hover")

  -- 4. Source action: fix all (asked for by kind, as on-save "fixAll" setups do).
  local whole = { start = { line = 0, character = 0 }, ["end"] = { line = vim.api.nvim_buf_line_count(bufnr), character = 0 } }
  local fix_all = code_actions(client, bufnr, whole, { diagnostics = {}, only = { "source.fixAll.servelint" } })
  report.fix_all = {}
  for _, a in ipairs(fix_all) do
    table.insert(report.fix_all, { title = a.title, kind = a.kind, has_edit = a.edit ~= nil })
  end
  step("fixAll")

  -- 2. Quick fix for SL002, with the diagnostic (as Neovim stores it) in the context.
  local sl002
  for _, d in ipairs(vim.lsp.diagnostic.get_line_diagnostics(bufnr, 2, {}, client_id)) do
    if d.code == "SL002" then
      sl002 = d
    end
  end
  if not sl002 then
    error("no SL002 diagnostic on line 2 in vim.lsp.diagnostic.get_line_diagnostics")
  end
  local actions = code_actions(client, bufnr, sl002.range, { diagnostics = { sl002 } })
  report.quick_fixes = {}
  local preferred
  for _, a in ipairs(actions) do
    table.insert(report.quick_fixes, { title = a.title, kind = a.kind, isPreferred = a.isPreferred == true })
    if a.kind == "quickfix" and a.isPreferred and not preferred then
      preferred = a
    end
  end
  if not preferred or not preferred.edit then
    error("no preferred quickfix with an edit for SL002: " .. vim.inspect(actions))
  end

  -- 5. Apply it, wait for the diagnostics of the edited text, and time didChange -> publish.
  local edit_at = now_ms()
  local version_before, version_after, pub = lib.apply_and_wait(
    bufnr, preferred.edit, function() return publishes end, 1)
  report.lines_after_fix = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  report.versions = { before = version_before, after = version_after }
  step("quick fix applied")
  local change
  for _, c in ipairs(did_change_at) do
    if c.version == version_after then
      change = c
    end
  end
  report.timing_ms = {
    did_change_to_diagnostics = change and (pub.at - change.at) or vim.NIL,
    edit_to_diagnostics = pub.at - edit_at, -- includes Neovim's own didChange debounce
  }
  report.did_change_count = #did_change_at
  report.after_fix = snapshot_diagnostics(bufnr)
  report.hover_after_fix = hover_markdown(client, bufnr, 3, 25)   -- "flash_infer" (SL007)
  step("diagnostics after fix")

  vim.lsp.stop_client(client_id)
  vim.wait(2000, function() return client.is_stopped() end, 20)
end

lib.finish(main, report, out_path)
