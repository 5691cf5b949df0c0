-- Drives a real Neovim through ms-lint's documented configuration (tests/test_neovim.py): opens a Python file,
-- waits for the server's diagnostics, applies a quick fix through vim.lsp.buf.code_action(), then the documented
-- "fix all" mapping, and writes what it saw as JSON to $MS_LINT_NVIM_RESULT. Runs on Neovim 0.7 and newer.
local result = { nvim = vim.version(), steps = {}, menus = {}, publishes = {}, errors = {} }
local timeout = tonumber(os.getenv("MS_LINT_NVIM_TIMEOUT") or "30000")

local function step(name, value)
  table.insert(result.steps, name)
  result[name] = value
end

-- every publishDiagnostics the client receives, as sent (0-based lines), before Neovim handles it
local publish = vim.lsp.handlers["textDocument/publishDiagnostics"]
vim.lsp.handlers["textDocument/publishDiagnostics"] = function(err, params, ctx, config)
  local codes = {}
  for _, d in ipairs(params.diagnostics) do
    table.insert(codes, { code = d.code, line = d.range.start.line, source = d.source })
  end
  table.insert(result.publishes, { version = params.version, diagnostics = codes })
  return publish(err, params, ctx, config)
end

-- the code action menu: pick the entry whose title starts with `wanted`, record every title offered
local wanted
vim.ui.select = function(items, _, on_choice)
  local titles, chosen = {}, nil
  for i, item in ipairs(items) do
    local action = item.action or item[2] -- {ctx=, action=} from 0.10, {client_id, action} before
    table.insert(titles, action.title)
    if chosen == nil and wanted and action.title:sub(1, #wanted) == wanted then
      chosen = i
    end
  end
  table.insert(result.menus, titles)
  if chosen then
    on_choice(items[chosen], chosen)
  else
    on_choice(nil, nil)
  end
end

local function diagnostics(buf)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(found, { code = d.code, line = d.lnum, col = d.col, source = d.source })
  end
  table.sort(found, function(a, b)
    return a.line < b.line or (a.line == b.line and a.col < b.col)
  end)
  return found
end

local function codes(buf)
  local list = {}
  for _, d in ipairs(diagnostics(buf)) do
    table.insert(list, d.code)
  end
  return table.concat(list, ",")
end

local function text(buf)
  return table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
end

local function wait(name, condition)
  if not vim.wait(timeout, condition, 20) then
    error("timed out waiting for " .. name)
  end
end

local function run()
  vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("MS_LINT_NVIM_FILE")))
  local buf = vim.api.nvim_get_current_buf()
  step("filetype", vim.bo[buf].filetype)
  local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
  wait("the client", function() return #get_clients({ bufnr = buf }) > 0 end)
  local names = {}
  for _, client in ipairs(get_clients({ bufnr = buf })) do
    table.insert(names, client.name)
  end
  step("clients", names)
  wait("the first diagnostics", function() return #vim.diagnostic.get(buf) > 0 end)
  step("diagnostics", diagnostics(buf))

  -- a quick fix from the menu of vim.lsp.buf.code_action(), on the first MSL001 finding
  local target
  for _, d in ipairs(diagnostics(buf)) do
    if d.code == "MSL001" and target == nil then target = d end
  end
  if target == nil then error("no MSL001 diagnostic") end
  vim.api.nvim_win_set_cursor(0, { target.line + 1, target.col })
  local tick = vim.api.nvim_buf_get_changedtick(buf)
  wanted = "MSL001: Replace with `ops.exp`"
  vim.lsp.buf.code_action()
  wait("the quick fix", function() return vim.api.nvim_buf_get_changedtick(buf) ~= tick end)
  step("after_quick_fix", text(buf))
  local before = codes(buf)
  wait("diagnostics of the fixed text", function() return codes(buf) ~= before end)
  step("diagnostics_after_quick_fix", diagnostics(buf))

  -- the documented "fix all" mapping (<leader>mf)
  tick = vim.api.nvim_buf_get_changedtick(buf)
  wanted = "ms-lint: fix all"
  vim.cmd("normal \\mf")
  wait("fix all", function() return vim.api.nvim_buf_get_changedtick(buf) ~= tick end)
  step("after_fix_all", text(buf))
  wait("diagnostics of the text after fix all", function() return codes(buf) == "MSL030,MSL001" end)
  step("diagnostics_after_fix_all", diagnostics(buf))
end

local ok, err = xpcall(run, debug.traceback)
if not ok then
  table.insert(result.errors, err)
end
result.messages = vim.fn.execute("messages")
vim.fn.writefile({ vim.fn.json_encode(result) }, os.getenv("MS_LINT_NVIM_RESULT"))
vim.cmd("qa!")
