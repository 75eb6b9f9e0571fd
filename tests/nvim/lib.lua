-- Helpers the headless-Neovim scripts share (loaded with dofile from each script).
-- Requests are synchronous with a bounded wait, so a script never hangs.

local M = {}

M.WAIT_MS = 10000

-- The hover text at a position, or {error = ...}.
function M.hover_markdown(client, bufnr, line, character)
  local resp, err = client.request_sync("textDocument/hover", {
    textDocument = vim.lsp.util.make_text_document_params(bufnr),
    position = { line = line, character = character },
  }, M.WAIT_MS, bufnr)
  if not resp then
    return { error = tostring(err) }
  end
  if resp.err then
    return { error = vim.inspect(resp.err) }
  end
  local contents = resp.result and resp.result.contents
  if type(contents) == "table" then
    return { kind = contents.kind, value = contents.value }
  end
  return { value = contents }
end

-- The code actions for a range; raises when the request fails.
function M.code_actions(client, bufnr, range, context)
  local resp, err = client.request_sync("textDocument/codeAction", {
    textDocument = vim.lsp.util.make_text_document_params(bufnr),
    range = range,
    context = context,
  }, M.WAIT_MS, bufnr)
  if not resp then
    error("codeAction request failed: " .. tostring(err))
  end
  if resp.err then
    error("codeAction error: " .. vim.inspect(resp.err))
  end
  return resp.result or {}
end

-- Code actions in a JSON-friendly shape for the report.
function M.summarize_actions(actions)
  local list = {}
  for _, a in ipairs(actions) do
    table.insert(list, {
      title = a.title,
      kind = a.kind,
      isPreferred = a.isPreferred == true,
      has_edit = a.edit ~= nil,
    })
  end
  return list
end

-- One servelint client; server messages, errors and its exit go into `report`.
function M.start_client(python, root, report, on_publish)
  local client_id = vim.lsp.start_client({
    name = "servelint",
    cmd = { python, "-m", "servelint", "lsp" },
    root_dir = root,
    handlers = {
      ["textDocument/publishDiagnostics"] = on_publish,
      ["window/logMessage"] = function(_, result)
        table.insert(report.server_messages, result and result.message)
      end,
      ["window/showMessage"] = function(_, result)
        table.insert(report.server_messages, result and result.message)
      end,
    },
    on_error = function(code, err)
      table.insert(report.errors, "client error " .. tostring(code) .. ": " .. vim.inspect(err))
    end,
    on_exit = function(code, signal)
      report.server_exit = { code = code, signal = signal }
    end,
  })
  if not client_id then
    error("vim.lsp.start_client returned nil")
  end
  return client_id
end

-- Diagnostics as Neovim holds them (vim.diagnostic), in a JSON-friendly shape, sorted by
-- position. `extra(d, entry)`, when given, adds a script's own fields to each entry.
function M.snapshot_diagnostics(bufnr, extra)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local entry = {
      lnum = d.lnum,
      col = d.col,
      end_lnum = d.end_lnum,
      end_col = d.end_col,
      code = d.code,
      message = d.message,
      severity = vim.diagnostic.severity[d.severity], -- "ERROR", "WARN", "HINT", ...
      source = d.source,
    }
    if extra then
      extra(d, entry)
    end
    table.insert(list, entry)
  end
  table.sort(list, function(a, b)
    return a.lnum < b.lnum or (a.lnum == b.lnum and a.col < b.col)
  end)
  return list
end

-- Apply a workspace edit to the buffer and wait for the server's publish of the edited
-- version. `publishes()` returns the script's list of publishes ({version = ...}) for the
-- buffer. Returns the versions before and after the edit and that publish; raises when
-- no publish arrives in time.
function M.apply_and_wait(bufnr, edit, publishes, poll_ms, what)
  local seen = #publishes()
  local before = vim.lsp.util.buf_versions[bufnr]
  vim.lsp.util.apply_workspace_edit(edit, "utf-16")
  local after = vim.lsp.util.buf_versions[bufnr]
  local function fresh()
    local list = publishes()
    for i = seen + 1, #list do
      if list[i].version == after then
        return list[i]
      end
    end
  end
  if not vim.wait(M.WAIT_MS, function() return fresh() ~= nil end, poll_ms) then
    error("no diagnostics for version " .. tostring(after) .. (what or "")
      .. " within " .. M.WAIT_MS .. " ms of the edit")
  end
  return before, after, fresh()
end

-- Run a script's `main`, record what it raised, write the report, and quit Neovim.
function M.finish(main, report, out_path)
  local ok, err = xpcall(main, debug.traceback)
  if not ok then
    table.insert(report.errors, tostring(err))
  end
  local wrote, werr = pcall(function()
    local fh = assert(io.open(out_path, "w"))
    fh:write(vim.json.encode(report))
    fh:close()
  end)
  if not wrote then
    io.stderr:write("could not write report: " .. tostring(werr) .. "\n")
  end
  vim.cmd("qa!")
end

return M
