/**
 * An MCP server over stdio that `magi mcp` reaches in the conformance test (config
 * `mcp_servers`), so the suite's resource scenarios read upstream resources through magi:
 * `test://static-text`, `test://static-binary` and the template `test://template/{id}/data`.
 */
// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

// A 1×1 transparent PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

const server = new Server({ name: "conformance-upstream", version: "1.0.0" }, {
  capabilities: { resources: {} },
});
server.setRequestHandler(ListResourcesRequestSchema, () => ({
  resources: [
    { uri: "test://static-text", name: "static-text", mimeType: "text/plain" },
    { uri: "test://static-binary", name: "static-binary", mimeType: "image/png" },
  ],
}));
server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
  resourceTemplates: [
    { uriTemplate: "test://template/{id}/data", name: "template", mimeType: "application/json" },
  ],
}));
server.setRequestHandler(ReadResourceRequestSchema, (request) => {
  const uri = request.params.uri;
  if (uri === "test://static-text") {
    return {
      contents: [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }],
    };
  }
  if (uri === "test://static-binary") return { contents: [{ uri, mimeType: "image/png", blob: PNG }] };
  const m = uri.match(/^test:\/\/template\/([^/]+)\/data$/);
  if (m) {
    return {
      contents: [{
        uri,
        mimeType: "application/json",
        text: JSON.stringify({ id: m[1], templateTest: true, data: `Data for ID: ${m[1]}` }),
      }],
    };
  }
  throw new McpError(-32002, `Resource not found: ${uri}`);
});
await server.connect(new StdioServerTransport());
