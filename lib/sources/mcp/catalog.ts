/**
 * Upstream MCP servers' resources and prompts (SPEC S9). Resources reach the model through
 * three tools, as Codex offers them: `list_mcp_resources {server?}`,
 * `list_mcp_resource_templates {server?}` and `read_mcp_resource {server, uri}` (its contents
 * pass the pipeline like any result: text to said, binary saved to a file and described,
 * masked and bounded). Prompts are listed and fetched for chat's slash commands
 * ({@link listMcpPrompts}, {@link getMcpPrompt}). A server that does not declare the
 * capability is left out; one that cannot start within its connect timeout is named in one
 * line of the result, never waited for beyond it.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Masker } from "../../pipeline/mask.ts";
import { emitContent } from "./content.ts";
import type { Emit, Outcome, Tool } from "../../core/types.ts";

/** A configured server, as the catalogue reaches it. */
export interface ServerHandle {
  name: string;
  /** The connected client (the server is started when it is not running). */
  client(): Promise<Client>;
  /** Milliseconds to wait for it to start. */
  connectMs: number;
}

/** What the catalogue needs from the MCP source. */
export interface CatalogOptions {
  /** The servers of the latest runtime. */
  servers: () => ServerHandle[];
  masker: Masker;
  spillDir: string;
}

/** One prompt of an upstream server, for a slash command `/<server>:<name>`. */
export interface McpPrompt {
  server: string;
  name: string;
  title?: string;
  description?: string;
  arguments: { name: string; description?: string; required?: boolean }[];
}

async function ready(
  handle: ServerHandle,
): Promise<{ client: Client } | { problem: string }> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<{ problem: string }>((resolve) => {
    timer = setTimeout(
      () => resolve({ problem: `not ready within ${handle.connectMs / 1000} s` }),
      handle.connectMs,
    );
  });
  try {
    return await Promise.race([handle.client().then((client) => ({ client })), late]);
  } catch (error) {
    return { problem: (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

/** Each chosen server's client, or one line saying why it is left out. */
export async function reach(
  opts: CatalogOptions,
  server: string | undefined,
  capability: "resources" | "prompts",
): Promise<{ clients: [string, Client][]; problems: string[] }> {
  const handles = opts.servers().filter((h) => server === undefined || h.name === server);
  if (server !== undefined && handles.length === 0) {
    const known = opts.servers().map((h) => h.name).join(", ") || "none";
    return { clients: [], problems: [`no MCP server "${server}" (configured: ${known})`] };
  }
  const clients: [string, Client][] = [];
  const problems: string[] = [];
  await Promise.all(handles.map(async (h) => {
    const got = await ready(h);
    if ("problem" in got) return void problems.push(`MCP server "${h.name}": ${got.problem}`);
    if (got.client.getServerCapabilities()?.[capability]) clients.push([h.name, got.client]);
    else if (server !== undefined) problems.push(`MCP server "${h.name}" has no ${capability}`);
  }));
  clients.sort((a, b) => a[0] < b[0] ? -1 : 1);
  return { clients, problems };
}

/** Every page of a cursor-paged list. */
export async function pages<T>(
  fetch: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string }>,
): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await fetch(cursor);
    all.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor && all.length < 10_000);
  return all;
}

async function sayJson(emit: Emit, value: unknown, problems: string[]): Promise<void> {
  await emit.said(JSON.stringify(value, null, 1) + "\n");
  for (const p of problems) await emit.said(`[magi: ${p}]\n`);
}

const SERVER_PARAM = {
  type: "string",
  description: "The MCP server's name (as in config mcp_servers); all servers when left out",
};

/** The resource tools, for a runtime with MCP servers. */
export function resourceTools(opts: CatalogOptions): Tool[] {
  const origin = { source: "mcp", where: "mcp:*/resources" };
  /** A builtin that lists one kind of item from each server reached, as JSON under `key`. */
  const lister = (
    name: string,
    description: string,
    key: string,
    list: (client: Client, cursor: string | undefined, signal?: AbortSignal) => Promise<{
      items: Record<string, unknown>[];
      nextCursor?: string;
    }>,
  ): Tool => ({
    declaration: {
      name,
      description,
      parameters: { type: "object", properties: { server: SERVER_PARAM } },
    },
    origin,
    listing: { annotations: { readOnlyHint: true } },
    invoke: async (call): Promise<Outcome> => {
      const server = call.args.server as string | undefined;
      const { clients, problems } = await reach(opts, server, "resources");
      const found = await Promise.all(clients.map(async ([name, client]) => {
        try {
          const items = await pages((cursor) => list(client, cursor, call.signal));
          return items.map((item) => ({ server: name, ...item }));
        } catch (error) {
          problems.push(`MCP server "${name}": ${(error as Error).message}`);
          return [];
        }
      }));
      await sayJson(call.emit, { [key]: found.flat() }, problems);
      return { isError: server !== undefined && clients.length === 0 };
    },
  });
  /** `value`'s fields named in `keys` that are set. */
  const some = (value: Record<string, unknown>, keys: string[]) =>
    Object.fromEntries(keys.flatMap((k) => value[k] ? [[k, value[k]]] : []));
  const listResources = lister(
    "list_mcp_resources",
    "Lists the resources (files, records, documents) the MCP servers offer: " +
      "server, uri, name, mimeType, description. Read one with read_mcp_resource.",
    "resources",
    (client, cursor, signal) =>
      client.listResources(cursor ? { cursor } : undefined, { signal }).then((r) => ({
        items: r.resources.map((x) => some(x, ["uri", "name", "title", "mimeType", "description"])),
        nextCursor: r.nextCursor,
      })),
  );
  const listTemplates = lister(
    "list_mcp_resource_templates",
    "Lists the MCP servers' resource templates (URI templates such as " +
      "file:///{path}): server, uriTemplate, name, description. Fill one in and read it " +
      "with read_mcp_resource.",
    "resourceTemplates",
    (client, cursor, signal) =>
      client.listResourceTemplates(cursor ? { cursor } : undefined, { signal }).then((r) => ({
        items: r.resourceTemplates.map((x) =>
          some(x, ["uriTemplate", "name", "mimeType", "description"])
        ),
        nextCursor: r.nextCursor,
      })),
  );
  const read: Tool = {
    declaration: {
      name: "read_mcp_resource",
      description: "Reads one resource of an MCP server by its URI (from list_mcp_resources " +
        "or a filled-in template). Text comes back as is; binary content is saved to a file " +
        "and described.",
      parameters: {
        type: "object",
        properties: {
          server: { type: "string", description: "The MCP server's name" },
          uri: { type: "string", description: "The resource's URI" },
        },
        required: ["server", "uri"],
      },
    },
    origin,
    listing: { annotations: { readOnlyHint: true } },
    invoke: async (call): Promise<Outcome> => {
      const server = call.args.server as string;
      const { clients, problems } = await reach(opts, server, "resources");
      if (clients.length === 0) return { isError: true, note: `[magi: ${problems.join("; ")}]` };
      const [, client] = clients[0];
      let contents;
      try {
        ({ contents } = await client.readResource({ uri: call.args.uri as string }, {
          signal: call.signal,
          timeout: call.timeoutMs,
        }));
      } catch (error) {
        return {
          isError: true,
          note: `[magi: MCP server "${server}" could not read ${call.args.uri}: ${
            (error as Error).message.replace(/^MCP error -?\d+: /, "")
          }]`,
        };
      }
      const result = {
        content: contents.map((resource) => ({ type: "resource" as const, resource })),
      } as CallToolResult;
      await emitContent(result, call.emit, {
        spillDir: opts.spillDir,
        masker: opts.masker,
        label: `${server}-resource`,
      });
      return { isError: false };
    },
  };
  return [listResources, listTemplates, read];
}

/**
 * Every prompt the latest runtime's MCP servers offer (servers without prompts, or not
 * ready within their connect timeout, are left out), masked, sorted by server and name. For
 * chat's slash commands: `/<server>:<name> [arguments]`.
 */
export async function listPrompts(opts: CatalogOptions): Promise<McpPrompt[]> {
  const { clients } = await reach(opts, undefined, "prompts");
  const found = await Promise.all(clients.map(async ([server, client]) => {
    try {
      const prompts = await pages((cursor) =>
        client.listPrompts(cursor ? { cursor } : undefined)
          .then((r) => ({ items: r.prompts, nextCursor: r.nextCursor }))
      );
      return prompts.map((p): McpPrompt => ({
        server,
        name: p.name,
        ...(p.title ? { title: opts.masker.maskText(p.title) } : {}),
        ...(p.description ? { description: opts.masker.maskText(p.description) } : {}),
        arguments: (p.arguments ?? []).map((a) => ({
          name: a.name,
          ...(a.description ? { description: opts.masker.maskText(a.description) } : {}),
          ...(a.required ? { required: true } : {}),
        })),
      }));
    } catch {
      return [];
    }
  }));
  return found.flat().sort((a, b) =>
    a.server === b.server ? (a.name < b.name ? -1 : 1) : a.server < b.server ? -1 : 1
  );
}

/**
 * A prompt's messages as the text of one user message (each message's text; a message that
 * is not the user's is marked `[assistant]`; non-text content described), masked.
 *
 * @throws Error saying why when the server cannot be reached or refuses the prompt
 */
export async function getPrompt(
  opts: CatalogOptions,
  server: string,
  name: string,
  args: Record<string, string> = {},
): Promise<string> {
  const { clients, problems } = await reach(opts, server, "prompts");
  if (clients.length === 0) throw new Error(problems.join("; "));
  const result = await clients[0][1].getPrompt({ name, arguments: args }).catch((error) => {
    const why = (error as Error).message.replace(/^MCP error -?\d+: /, "");
    throw new Error(`MCP server "${server}" prompt "${name}": ${why}`);
  });
  const parts: string[] = [];
  for (const m of result.messages) {
    const c = m.content as {
      type: string;
      text?: string;
      resource?: { uri: string; text?: string };
    };
    const text = c.type === "text"
      ? c.text ?? ""
      : c.type === "resource" && typeof c.resource?.text === "string"
      ? `[resource ${c.resource.uri}:]\n${c.resource.text}`
      : `[${c.type} content, left out]`;
    parts.push(m.role === "user" ? text : `[${m.role}] ${text}`);
  }
  return opts.masker.maskText(parts.join("\n\n"));
}
