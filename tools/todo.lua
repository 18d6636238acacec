-- todo: the TODO and FIXME lines under a folder, as file:line: text.
magi.tool("todo", {
  description = "List TODO and FIXME comments under a folder (file:line: text)",
  needs = {
    type = "object",
    properties = {
      path = { type = "string", description = "Folder or file to search (default: the working directory)" },
      limit = { type = "integer", minimum = 1, description = "At most this many lines (default 100)" },
    },
  },
  run = function(args)
    local path = args.path or "."
    local limit = args.limit or 100
    local out, status, err = magi.exec("grep", {
      "-rnI", "-E", "\\b(TODO|FIXME)\\b",
      "--exclude-dir=.git", "--exclude-dir=node_modules", "--", path,
    })
    if status == 1 then return { said = "no TODO or FIXME found", shown = "no TODO or FIXME found" } end
    if status ~= 0 then error("grep failed: " .. err) end
    local lines, n = {}, 0
    for line in out:gmatch("[^\n]+") do
      n = n + 1
      if n <= limit then lines[#lines + 1] = (line:gsub("^%./", "")) end
    end
    local more = n > limit and string.format("\n… and %d more", n - limit) or ""
    local text = table.concat(lines, "\n") .. more
    return { said = text, shown = string.format("%d TODO/FIXME lines\n%s", n, text) }
  end,
})
