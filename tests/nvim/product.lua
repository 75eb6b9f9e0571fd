-- The editor product, as a user meets it: a workspace with a project configuration, a
-- launch with problems, hover, a quick fix, a setting changed while the server runs,
-- a finding silenced with a reason through the code action, and completion.
-- Writes a JSON report for tests/test_nvim_product.py; never asserts itself.
--
-- Environment: SERVELINT_NVIM_FILE, SERVELINT_NVIM_ROOT, SERVELINT_NVIM_OUT,
-- SERVELINT_NVIM_PYTHON (as the other scripts).

local lib = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/lib.lua")
local WAIT_MS = lib.WAIT_MS

local file = assert(os.getenv("SERVELINT_NVIM_FILE"))
local root = assert(os.getenv("SERVELINT_NVIM_ROOT"))
local out_path = assert(os.getenv("SERVELINT_NVIM_OUT"))
local python = assert(os.getenv("SERVELINT_NVIM_PYTHON"))

local report = { steps = {}, errors = {}, server_messages = {} }

local diagnostics = lib.snapshot_diagnostics

local function codes(bufnr)
  local out = {}
  for _, d in ipairs(diagnostics(bufnr)) do table.insert(out, d.code) end
  return out
end

local publishes = 0
local default_publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
local function on_publish(err, result, ctx, config)
  publishes = publishes + 1
  return default_publish(err, result, ctx, config)
end

-- Wait for a publish after `since` whose diagnostics satisfy `pred`.
local function wait_for(bufnr, since, pred, what)
  local ok = vim.wait(WAIT_MS, function() return publishes > since and pred(codes(bufnr)) end, 10)
  if not ok then
    error("timed out waiting for " .. what .. "; diagnostics now: " .. vim.inspect(codes(bufnr)))
  end
end

local function has(list, code)
  for _, c in ipairs(list) do if c == code then return true end end
  return false
end

local function line_diag(bufnr, client_id, code)
  for _, d in ipairs(vim.lsp.diagnostic.get_line_diagnostics(bufnr, nil, {}, client_id)) do
    if d.code == code then return d end
  end
  for lnum = 0, vim.api.nvim_buf_line_count(bufnr) - 1 do
    for _, d in ipairs(vim.lsp.diagnostic.get_line_diagnostics(bufnr, lnum, {}, client_id)) do
      if d.code == code then return d end
    end
  end
end

local function main()
  vim.cmd("filetype on")
  vim.cmd("edit " .. vim.fn.fnameescape(file))
  local bufnr = vim.api.nvim_get_current_buf()

  local client_id = vim.lsp.start_client({
    name = "servelint",
    cmd = { python, "-m", "servelint", "lsp" },
    root_dir = root,
    settings = { servelint = { ignore = {} } },
    handlers = {
      ["textDocument/publishDiagnostics"] = on_publish,
      ["window/showMessage"] = function(_, result) table.insert(report.server_messages, result and result.message) end,
    },
    on_exit = function(code, signal) report.server_exit = { code = code, signal = signal } end,
  })
  vim.lsp.buf_attach_client(bufnr, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  if not vim.wait(WAIT_MS, function() return client.initialized end, 20) then
    error("no initialize")
  end

  -- 1. Findings, with the project's .servelint.toml severity applied.
  wait_for(bufnr, 0, function(c) return has(c, "SL002") and has(c, "SL007") end, "first diagnostics")
  report.initial = diagnostics(bufnr)
  table.insert(report.steps, "findings")

  -- 2. Hover on an option and on the flagged word.
  report.hover_option = lib.hover_markdown(client, bufnr, 4, 6)    -- --port
  report.hover_finding = lib.hover_markdown(client, bufnr, 2, 6)   -- --tp_size
  table.insert(report.steps, "hover")

  -- 3. The preferred quick fix for SL002.
  local sl002 = line_diag(bufnr, client_id, "SL002")
  local actions = lib.code_actions(client, bufnr, sl002.range, { diagnostics = { sl002 } })
  local preferred
  for _, a in ipairs(actions) do
    if a.isPreferred and not preferred then preferred = a end
  end
  local before = publishes
  vim.lsp.util.apply_workspace_edit(preferred.edit, "utf-16")
  wait_for(bufnr, before, function(c) return not has(c, "SL002") end, "SL002 to go after the fix")
  report.after_fix = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  table.insert(report.steps, "fixed")

  -- 4. A setting changed while the server runs: ignore SL007, then take it back.
  before = publishes
  client.config.settings = { servelint = { ignore = { "SL007" } } }
  client.notify("workspace/didChangeConfiguration", { settings = client.config.settings })
  wait_for(bufnr, before, function(c) return not has(c, "SL007") end, "SL007 to go when ignored")
  report.with_ignore = codes(bufnr)
  before = publishes
  client.config.settings = { servelint = { ignore = {} } }
  client.notify("workspace/didChangeConfiguration", { settings = client.config.settings })
  wait_for(bufnr, before, function(c) return has(c, "SL007") end, "SL007 to come back")
  report.without_ignore = codes(bufnr)
  table.insert(report.steps, "settings")

  -- 5. Silence SL007 with a reason: the code action inserts the comment above the launch,
  --    the user writes the reason in place of the placeholder.
  local sl007 = line_diag(bufnr, client_id, "SL007")
  actions = lib.code_actions(client, bufnr, sl007.range, { diagnostics = { sl007 } })
  report.sl007_actions = lib.summarize_actions(actions)
  local disable
  for _, a in ipairs(actions) do
    if a.title:find("Disable SL007 for this launch", 1, true) then disable = a end
  end
  before = publishes
  vim.lsp.util.apply_workspace_edit(disable.edit, "utf-16")
  wait_for(bufnr, before, function(c) return not has(c, "SL007") end, "SL007 to be silenced")
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  for i, l in ipairs(lines) do
    if l:find("servelint: disable=SL007", 1, true) then
      before = publishes
      vim.api.nvim_buf_set_lines(bufnr, i - 1, i, false,
        { (l:gsub("TODO: reason", "our fork registers flash_infer")) })
      break
    end
  end
  wait_for(bufnr, before, function(c) return not has(c, "SL007") end, "diagnostics after the reason")
  report.after_suppress = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  report.after_suppress_codes = codes(bufnr)
  table.insert(report.steps, "suppressed")

  -- 6. Completion while typing a new option on the last line.
  local last = vim.api.nvim_buf_line_count(bufnr) - 1
  local text = vim.api.nvim_buf_get_lines(bufnr, last, last + 1, false)[1]
  vim.api.nvim_buf_set_lines(bufnr, last, last + 1, false, { text .. " --enable-hier" })
  local col = #text + #" --enable-hier"
  local resp = client.request_sync("textDocument/completion", {
    textDocument = vim.lsp.util.make_text_document_params(bufnr),
    position = { line = last, character = col },
    context = { triggerKind = 1 },
  }, WAIT_MS, bufnr)
  local items = (resp and resp.result and (resp.result.items or resp.result)) or {}
  report.completion_labels = {}
  for _, it in ipairs(items) do table.insert(report.completion_labels, it.label) end
  local hier
  for _, it in ipairs(items) do if it.label == "--enable-hierarchical-cache" then hier = it end end
  if hier then
    local r = client.request_sync("completionItem/resolve", hier, WAIT_MS, bufnr)
    report.resolved_doc = r and r.result and r.result.documentation
  end
  table.insert(report.steps, "completion")

  vim.lsp.stop_client(client_id)
  vim.wait(2000, function() return client.is_stopped() end, 20)
end

lib.finish(main, report, out_path)
