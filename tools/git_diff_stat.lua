-- git_diff_stat: what changed, in one line for the model and the whole --stat for the person.
magi.tool("git_diff_stat", {
  description = "Summarise uncommitted changes in this git repository (files changed, insertions, deletions)",
  needs = {
    type = "object",
    properties = {
      staged = { type = "boolean", description = "Only changes staged for commit" },
      base = { type = "string", description = "Compare against this commit or branch instead" },
    },
  },
  run = function(args)
    local argv = { "diff", "--stat" }
    if args.staged then argv[#argv + 1] = "--cached" end
    if args.base then
      if args.base:sub(1, 1) == "-" then error("base must be a commit or branch, not an option") end
      argv[#argv + 1] = args.base
    end
    argv[#argv + 1] = "--"
    local out = magi.exec("git", argv, { check = true })
    if out == "" then
      return { said = "no changes", shown = "no changes" }
    end
    local summary = out:match("([^\n]*changed[^\n]*)$") or out
    return { said = summary:gsub("^%s+", ""), shown = out }
  end,
})
