-- Every host format in one editor session: drives Neovim's built-in LSP client (0.7+) against
-- the servelint server on copies of the fixtures in tests/nvim/formats/ (a Kubernetes manifest,
-- a compose file, .vscode/launch.json, a Dockerfile, a Python script, a Markdown page and an
-- SGLang config file) and writes what it saw to a JSON file for tests/test_nvim_formats.py.
--
-- Environment:
--   SERVELINT_NVIM_SPEC    a JSON file: a list of {name, path, code, filetype, pick}: filetype is
--                          the one to set when Neovim does not detect any, pick the title of the
--                          quick fix to apply when the server marks none as preferred (or null)
--   SERVELINT_NVIM_ROOT    root_dir for the client (the test's tmp dir)
--   SERVELINT_NVIM_OUT     where to write the JSON report
--   SERVELINT_NVIM_PYTHON  the Python that runs `-m servelint lsp`
--
-- As in seed.lua the script never asserts: every step records its result (or its error) and the
-- pytest side decides. One client serves every buffer. A file whose step raises is recorded with
-- its error and the next file still runs; the script always ends with `qa!`.

local lib = dofile(vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":h") .. "/lib.lua")
local WAIT_MS = lib.WAIT_MS

local spec_path = assert(os.getenv("SERVELINT_NVIM_SPEC"), "SERVELINT_NVIM_SPEC not set")
local root = assert(os.getenv("SERVELINT_NVIM_ROOT"), "SERVELINT_NVIM_ROOT not set")
local out_path = assert(os.getenv("SERVELINT_NVIM_OUT"), "SERVELINT_NVIM_OUT not set")
local python = assert(os.getenv("SERVELINT_NVIM_PYTHON"), "SERVELINT_NVIM_PYTHON not set")

local report = { errors = {}, server_messages = {}, files = {} }

local function read_spec()
  local fh = assert(io.open(spec_path, "r"))
  local text = fh:read("*a")
  fh:close()
  return vim.json.decode(text)
end

-- Diagnostics as Neovim holds them, with the server's own LSP range next to vim's positions.
-- `raw_list` is the server's last publish for the buffer; each entry gets the LSP range of the
-- published diagnostic with the same code and message.
local function snapshot_diagnostics(bufnr, raw_list)
  return lib.snapshot_diagnostics(bufnr, function(d, entry)
    local r
    for _, p in ipairs(raw_list or {}) do
      if p.code == d.code and p.message == d.message then
        r = p.range
      end
    end
    entry.lsp_range = r and { r.start.line, r.start.character, r["end"].line, r["end"].character } or vim.NIL
  end)
end

local function request(client, bufnr, method, params)
  local resp, err = client.request_sync(method, params, WAIT_MS, bufnr)
  if not resp then
    error(method .. " request failed: " .. tostring(err))
  end
  if resp.err then
    error(method .. " error: " .. vim.inspect(resp.err))
  end
  return resp.result
end

local summarize_actions = lib.summarize_actions

-- The LSP diagnostic with this code, as the server last published it for `uri` (Neovim 0.7
-- does not keep the LSP range in user_data.lsp).
local function lsp_diagnostic(raw_list, code)
  for _, d in ipairs(raw_list or {}) do
    if d.code == code then
      return d
    end
  end
end

local publishes = {} -- uri -> list of {version, count}
local raw = {} -- uri -> the diagnostics of the last publish, exactly as the server sent them
local default_publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
local function on_publish(err, result, ctx, config)
  if result and result.uri then
    local list = publishes[result.uri] or {}
    publishes[result.uri] = list
    table.insert(list, { version = result.version, count = result.diagnostics and #result.diagnostics })
    raw[result.uri] = result.diagnostics or {}
  end
  return default_publish(err, result, ctx, config)
end

local function run_file(client, client_id, entry, rec)
  vim.cmd("edit " .. vim.fn.fnameescape(entry.path))
  local bufnr = vim.api.nvim_get_current_buf()
  local uri = vim.uri_from_bufnr(bufnr)
  rec.buffer_name = vim.api.nvim_buf_get_name(bufnr)
  rec.detected_filetype = vim.bo[bufnr].filetype
  if rec.detected_filetype == "" then
    vim.bo[bufnr].filetype = entry.filetype
  end
  rec.filetype = vim.bo[bufnr].filetype
  rec.lines_original = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)

  vim.lsp.buf_attach_client(bufnr, client_id)
  rec.attached = vim.lsp.buf_is_attached(bufnr, client_id)

  -- 1. Diagnostics of the original text: wait for a publish for this document, then for the
  -- expected code (a first publish could in principle be partial).
  local function has_code()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.code == entry.code then
        return true
      end
    end
    return false
  end
  local t0 = vim.loop.hrtime()
  local got_publish = vim.wait(WAIT_MS, function() return publishes[uri] ~= nil end, 10)
  if got_publish then
    vim.wait(WAIT_MS, has_code, 10)
  end
  rec.first_publish_ms = (vim.loop.hrtime() - t0) / 1e6
  rec.initial = snapshot_diagnostics(bufnr, raw[uri])
  if not got_publish then
    error("no publishDiagnostics for " .. uri .. " within " .. WAIT_MS .. " ms")
  end
  local diag = lsp_diagnostic(raw[uri], entry.code)
  if not diag then
    error("no " .. entry.code .. " diagnostic on " .. entry.name)
  end

  -- 2. Hover one character inside the flagged token.
  local pos = { line = diag.range.start.line, character = diag.range.start.character + 1 }
  rec.hover_position = { pos.line, pos.character }
  local ok, hover = pcall(request, client, bufnr, "textDocument/hover", {
    textDocument = vim.lsp.util.make_text_document_params(bufnr),
    position = pos,
  })
  if not ok then
    rec.hover = { error = tostring(hover) }
  else
    local contents = hover and hover.contents
    if type(contents) == "table" then
      rec.hover = { kind = contents.kind, value = contents.value }
    else
      rec.hover = { value = contents or vim.NIL }
    end
  end

  -- 3. Quick fixes for the diagnostic, as Neovim would ask for them under the cursor.
  local actions = request(client, bufnr, "textDocument/codeAction", {
    textDocument = vim.lsp.util.make_text_document_params(bufnr),
    range = diag.range,
    context = { diagnostics = { diag } },
  }) or {}
  rec.actions = summarize_actions(actions)
  local preferred
  for _, a in ipairs(actions) do
    if a.kind == "quickfix" and a.isPreferred and a.edit and not preferred then
      preferred = a
    end
  end
  rec.preferred_title = preferred and preferred.title or vim.NIL
  -- No preferred fix (the server offers several equal choices): pick the one the test names,
  -- as a user picks an entry from the code action menu.
  local chosen = preferred
  if not chosen and entry.pick ~= vim.NIL and entry.pick ~= nil then
    for _, a in ipairs(actions) do
      if a.kind == "quickfix" and a.title == entry.pick and a.edit then
        chosen = a
      end
    end
  end
  if not chosen then
    rec.applied_title = vim.NIL
    return
  end
  rec.applied_title = chosen.title
  rec.applied_edit = chosen.edit

  local version_before, version_after, pub = lib.apply_and_wait(
    bufnr, chosen.edit, function() return publishes[uri] or {} end, 5, " of " .. entry.name)
  rec.versions = { before = version_before, after = version_after }
  rec.lines_after_fix = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  rec.publish_after_fix = pub
  rec.after_fix = snapshot_diagnostics(bufnr, raw[uri])

  -- 4. Save what the user now has; the Python side checks it in its own syntax.
  vim.cmd("write")
  rec.saved = vim.api.nvim_buf_get_name(bufnr)
  rec.modified_after_write = vim.bo[bufnr].modified
end

local function main()
  vim.cmd("filetype on")
  vim.o.hidden = true
  local spec = read_spec()

  local client_id = lib.start_client(python, root, report, on_publish)
  local client = vim.lsp.get_client_by_id(client_id)

  for _, entry in ipairs(spec) do
    local rec = { name = entry.name, errors = {} }
    report.files[entry.name] = rec
    local t0 = vim.loop.hrtime()
    local ok, err = xpcall(run_file, debug.traceback, client, client_id, entry, rec)
    if not ok then
      table.insert(rec.errors, tostring(err))
    end
    rec.elapsed_ms = (vim.loop.hrtime() - t0) / 1e6
    report.client_count = #vim.lsp.get_active_clients()
  end

  vim.lsp.stop_client(client_id)
  vim.wait(2000, function() return client.is_stopped() end, 20)
end

lib.finish(main, report, out_path)
