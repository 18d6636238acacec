-- The test peer's question, reached through the casper transport.
magi.tool("casper_ask", {
  description = "Ask which colour, through the test peer",
  transport = "casper",
  peer = "testpeer",
  tool = "peer_ask",
})
