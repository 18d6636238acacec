/**
 * The floor for `scripts/bench_mcp.ts`: a bare MCP SDK server under Deno with `read` (reads
 * a file, nothing else), `run` (`sh -c` the command, nothing else) and `bash` (`bash -c`, the
 * program magi's `run` starts) — no pipeline, no registry, no masking.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const server = new Server({ name: "floor", version: "1.0.0" }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    {
      name: "read",
      description: "Reads a file",
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
    },
    {
      name: "run",
      description: "Runs a command line",
      inputSchema: { type: "object", properties: { command: { type: "string" } } },
    },
    {
      name: "bash",
      description: "Runs a command line with bash",
      inputSchema: { type: "object", properties: { command: { type: "string" } } },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const args = request.params.arguments ?? {};
  if (request.params.name === "read") {
    const text = await Deno.readTextFile(String(args.path));
    return { content: [{ type: "text", text }] };
  }
  const shell = request.params.name === "bash" ? "bash" : "sh";
  const out = await new Deno.Command(shell, { args: ["-c", String(args.command)] }).output();
  return { content: [{ type: "text", text: new TextDecoder().decode(out.stdout) }] };
});
await server.connect(new StdioServerTransport());
