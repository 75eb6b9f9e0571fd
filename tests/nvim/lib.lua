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

return M
