/**
 * A small MCP server over stdio for magi's client tests: a 5 MB result, a 20 MiB one (one
 * line of JSON-RPC over magi's message cap in tests), a crash mid-call,
 * an environment variable echoed back, its own pid, and content split by audience.
 * With FIXTURE_API_KEY set, the description of `pid` quotes it (as a careless server might).
 * With FIXTURE_PID_FILE set, it writes its pid there when it starts; with FIXTURE_STAY set, it
 * keeps running after its stdin ends (as a careless server would). With FIXTURE_RESOURCES set,
 * it serves the resource `fixture://watched`, takes subscriptions (in this process only: a
 * new process watches nothing), and its tool `touch` sends an update for each URI watched.
 */
// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  CallToolRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const pidFile = Deno.env.get("FIXTURE_PID_FILE");
if (pidFile) Deno.writeTextFileSync(pidFile, `${Deno.pid}\n`, { append: true });

const noArgs = { type: "object", properties: {} } as const;
const tools = [
  { name: "big", description: "Returns 5 MB of text", inputSchema: noArgs },
  { name: "huge", description: "Returns 20 MiB of text", inputSchema: noArgs },
  { name: "crash", description: "Ends the server in the middle of the call", inputSchema: noArgs },
  {
    name: "env",
    description: "Returns the value of an environment variable",
    inputSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] },
  },
  {
    name: "pid",
    description: `Returns the server's process id${
      Deno.env.get("FIXTURE_API_KEY") ? ` (key ${Deno.env.get("FIXTURE_API_KEY")})` : ""
    }`,
    inputSchema: noArgs,
  },
  { name: "split", description: "Returns text for the model and text for the user", inputSchema: noArgs },
  { name: "weird.name/x", description: "A name that needs mapping", inputSchema: noArgs },
  { name: "grow", description: "Adds the tool extra and announces it", inputSchema: noArgs },
];

const resources = Boolean(Deno.env.get("FIXTURE_RESOURCES"));
if (resources) {
  tools.push({ name: "touch", description: "Updates every watched resource", inputSchema: noArgs });
}
const server = new Server({ name: "fixture", version: "1.0.0" }, {
  capabilities: {
    tools: { listChanged: true },
    ...(resources ? { resources: { subscribe: true } } : {}),
  },
});
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
const watched = new Set<string>();
if (resources) {
  const uri = "fixture://watched";
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [{ uri, name: "watched" }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, () => ({
    contents: [{ uri, text: `pid ${Deno.pid}` }],
  }));
  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    watched.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    watched.delete(request.params.uri);
    return {};
  });
}
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });
  switch (request.params.name) {
    case "big": {
      const line = "0123456789".repeat(9) + "abcdefghi\n";
      return text(line.repeat(50_000) + "the very end\n");
    }
    case "huge":
      return text("x".repeat(20 * 1024 * 1024));
    case "crash":
      await new Promise((r) => setTimeout(r, 100));
      console.error("fixture: crashing on purpose");
      Deno.exit(7);
      break;
    case "env":
      return text(`value: ${Deno.env.get(String(request.params.arguments?.name)) ?? "(unset)"}`);
    case "pid":
      return text(String(Deno.pid));
    case "split":
      return {
        content: [
          { type: "text", text: "for the model", annotations: { audience: ["assistant"] } },
          { type: "text", text: "for the person", annotations: { audience: ["user"] } },
          { type: "text", text: "for both" },
        ],
      };
    case "weird.name/x":
      return text("mapped back");
    case "grow":
      if (!tools.some((t) => t.name === "extra")) {
        tools.push({ name: "extra", description: "Added while running", inputSchema: noArgs });
        setTimeout(() => server.sendToolListChanged(), 50);
      }
      return text("grown");
    case "extra":
      return text("extra here");
    case "touch":
      for (const uri of watched) await server.sendResourceUpdated({ uri });
      return text(`touched ${watched.size}`);
  }
  return { content: [{ type: "text", text: "unknown tool" }], isError: true };
});
await server.connect(new StdioServerTransport());
if (Deno.env.get("FIXTURE_STAY")) setInterval(() => {}, 1000);
