magi.tool("branch", {
  description = "the git branch this directory is on",
  needs = { },
  run = function()
    local out = magi.exec("git", { "branch", "--show-current" })
    return {
      said  = out,                       -- the model reads this. costs context.
      shown = "on " .. out,              -- the person sees this. costs nothing.
    }
  end,
})
