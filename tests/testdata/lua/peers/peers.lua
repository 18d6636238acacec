-- The test peer's tools, reached through the casper transport (needs absent: the peer's own).
magi.tool("casper_split", {
  description = "Said and shown apart, from the test peer",
  transport = "casper",
  peer = "testpeer",
  tool = "peer_split",
})

magi.tool("casper_fail", {
  description = "A failing peer tool",
  transport = "casper",
  peer = "testpeer",
  tool = "peer_fail",
})

magi.tool("peer_echo", {
  description = "The peer's echo, described again",
  transport = "casper",
  peer = "testpeer",
})
