/**
 * `completion/complete` for what `magi mcp` serves: a prompt (`NAME__prompt`) or a resource
 * template of an MCP server magi reaches is completed by that server, its values masked. An
 * upstream server that does not declare completions gives no values. `magi mcp` declares the
 * capability only when it reaches MCP servers ({@link canComplete}), since nothing else
 * can answer.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { CompleteRequestSchema, type CompleteResult } from "@modelcontextprotocol/sdk/types.js";
import { invalidParams } from "./call_request.ts";
import { type CatalogOptions, pages, reach } from "../sources/mcp/catalog.ts";
import { mcpCatalog } from "../sources/mcp/client.ts";
import { servedPrompt } from "./serve_catalog.ts";

/** Whether any MCP server could answer a completion: the latest runtime reaches one. */
export function canComplete(): boolean {
  return (mcpCatalog()?.servers().length ?? 0) > 0;
}

const NONE: CompleteResult = { completion: { values: [], hasMore: false } };

/** The server among `clients` that lists resource template `uri`, if any. */
async function templateOwner(
  clients: [string, Client][],
  uri: string,
): Promise<Client | undefined> {
  for (const [, client] of clients) {
    const templates = await pages((cursor) =>
      client.listResourceTemplates(cursor ? { cursor } : undefined)
        .then((r) => ({ items: r.resourceTemplates, nextCursor: r.nextCursor }))
    ).catch(() => []);
    if (templates.some((t) => t.uriTemplate === uri)) return client;
  }
  return undefined;
}

/**
 * Registers the `completion/complete` handler on `server` (whose capabilities must declare
 * `completions`); `plain` says whether config `mcp.plain_names` is on.
 *
 * @throws McpError -32602 (to the client) for a prompt or template no server offers
 */
export function serveCompletion(server: Server, plain: () => boolean = () => false): void {
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const cat: CatalogOptions | undefined = mcpCatalog();
    if (!cat) return NONE;
    const { ref, argument, context } = request.params;
    let client: Client | undefined;
    let upstreamRef = ref;
    if (ref.type === "ref/prompt") {
      const found = await servedPrompt(cat, ref.name, plain());
      if (!found) throw invalidParams(`Unknown prompt "${ref.name}"`);
      client = found.client;
      upstreamRef = { type: "ref/prompt", name: found.prompt.name };
    } else {
      const { clients } = await reach(cat, undefined, "resources");
      client = await templateOwner(clients, ref.uri);
      if (!client) throw invalidParams(`Unknown resource template "${ref.uri}"`);
    }
    if (!client.getServerCapabilities()?.completions) return NONE;
    const result = await client.complete({
      ref: upstreamRef,
      argument,
      ...(context ? { context } : {}),
    });
    const values = result.completion.values.map((v) => cat.masker.maskText(v));
    return { completion: { ...result.completion, values } };
  });
}
