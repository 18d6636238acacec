/**
 * `magi mcp` serves the resources and prompts it has: those of the MCP servers magi itself
 * reaches (config `mcp_servers`). Resources keep their URIs (`resources/read` goes to the
 * server that listed the URI, else to each server with resources in turn); prompts are named
 * `NAME__prompt` like tools, and magi's own skills are prompts too (serve_skills.ts). Everything is masked on the way out: resource text and blobs,
 * prompt messages, descriptions. With no servers the lists are empty.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  type Prompt,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { maskedBinary, maskedJson } from "../pipeline/attachments.ts";
import { invalidParams } from "./call_request.ts";
import type { Masker } from "../pipeline/mask.ts";
import { type CatalogOptions, pages, reach } from "../sources/mcp/catalog.ts";
import { mappedName, mcpCatalog } from "../sources/mcp/client.ts";
import { servedPromptNames } from "./served_names.ts";
import { skillPrompt, skillPrompts } from "./serve_skills.ts";
import type { Skill } from "../sources/skills/discover.ts";

/**
 * Registers the resources and prompts handlers on `server`; `plain` says whether config
 * `mcp.plain_names` is on (served_names.ts).
 */
export function serveCatalog(
  server: Server,
  plain: () => boolean = () => false,
  skills: () => readonly Skill[] = () => [],
): void {
  /** Which server listed each URI. */
  const owner = new Map<string, string>();
  const current = (): CatalogOptions =>
    mcpCatalog() ??
      { servers: () => [], masker: { maskText: (t: string) => t } as Masker, spillDir: "" };

  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const cat = current();
    const { clients } = await reach(cat, undefined, "resources");
    const lists = await Promise.all(clients.map(async ([name, client]) => {
      const items = await listed((p) => client.listResources(p), "resources");
      for (const r of items) owner.set(r.uri, name);
      return items;
    }));
    return { resources: maskedJson(lists.flat(), cat.masker) as never };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => {
    const cat = current();
    const { clients } = await reach(cat, undefined, "resources");
    const lists = await Promise.all(
      clients.map(([, client]) =>
        listed((p) => client.listResourceTemplates(p), "resourceTemplates")
      ),
    );
    return { resourceTemplates: maskedJson(lists.flat(), cat.masker) as never };
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const cat = current();
    const uri = request.params.uri;
    const { clients } = await reach(cat, undefined, "resources");
    const first = owner.get(uri);
    clients.sort(([a], [b]) => (a === first ? -1 : b === first ? 1 : 0));
    let last = "";
    for (const [, client] of clients) {
      try {
        const { contents } = await client.readResource({ uri });
        return {
          contents: contents.map((c) => {
            const out = { ...c } as Record<string, unknown>;
            if (typeof out.text === "string") out.text = cat.masker.maskText(out.text);
            if (typeof out.blob === "string") out.blob = maskedBinary(out.blob, cat.masker);
            return out;
          }) as never,
        };
      } catch (error) {
        // Not this server's: the next one is asked.
        last = (error as Error).message.replace(/^MCP error -?\d+: /, "");
      }
    }
    throw invalidParams(last || `Resource not found: ${uri}`);
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => {
    const cat = current();
    const own = skills();
    const all = await allPrompts(cat, plain(), new Set(own.map((s) => s.name)));
    return {
      prompts: [
        ...skillPrompts(own, cat.masker),
        ...maskedJson(all.map((p) => ({ ...p.prompt, name: p.served })), cat.masker) as Prompt[],
      ] as never,
    };
  });

  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const cat = current();
    const own = skills();
    let skill;
    try {
      skill = skillPrompt(own, request.params.name, request.params.arguments, cat.masker);
    } catch (error) {
      throw invalidParams((error as Error).message);
    }
    if (skill) return skill as never;
    const found = await servedPrompt(
      cat,
      request.params.name,
      plain(),
      new Set(own.map((s) => s.name)),
    );
    if (!found) throw invalidParams(`Unknown prompt "${request.params.name}"`);
    const result = await found.client.getPrompt({
      name: found.prompt.name,
      arguments: request.params.arguments,
    });
    return maskedJson(result, cat.masker) as never;
  });
}

/** Every item of one list a client serves, page by page; a server that cannot list gives none. */
function listed<K extends string, R extends Record<K, unknown[]> & { nextCursor?: string }>(
  ask: (params: { cursor: string } | undefined) => Promise<R>,
  key: K,
): Promise<R[K]> {
  return pages((cursor) =>
    ask(cursor ? { cursor } : undefined).then((r) => ({ items: r[key], nextCursor: r.nextCursor }))
  ).catch(() => []) as Promise<R[K]>; // the pages' items, one plain array
}

/** A served prompt: its server's client, the upstream prompt, its served and prefixed names. */
interface ServedPrompt {
  client: Client;
  prompt: Prompt;
  served: string;
  prefixed: string;
}

/** Every prompt of every server reached, with the names it is served under (served_names.ts). */
async function allPrompts(
  cat: CatalogOptions,
  plain: boolean,
  taken: ReadonlySet<string> = new Set(),
): Promise<ServedPrompt[]> {
  const { clients } = await reach(cat, undefined, "prompts");
  const lists = await Promise.all(clients.map(async ([name, client]) => {
    const items = await listed((p) => client.listPrompts(p), "prompts");
    return items.map((prompt) => ({ client, prompt, prefixed: mappedName(name, prompt.name) }));
  }));
  const all = lists.flat();
  // A plain name a skill has (skills as prompts, serve_skills.ts) stays prefixed.
  const names = servedPromptNames(
    all.map((p) => ({ prompt: p.prompt.name, prefixed: p.prefixed })),
    plain,
  ).map((served, i) => taken.has(served) ? all[i].prefixed : served);
  return all.map((p, i) => ({ ...p, served: names[i] }));
}

/**
 * The upstream server and prompt behind a served prompt name (its served or its prefixed
 * `NAME__prompt` name), or undefined when no server reached offers it.
 */
export async function servedPrompt(
  cat: CatalogOptions,
  name: string,
  plain: boolean,
  taken: ReadonlySet<string> = new Set(),
): Promise<{ client: Client; prompt: Prompt } | undefined> {
  const all = await allPrompts(cat, plain, taken);
  return all.find((p) => p.served === name) ?? all.find((p) => p.prefixed === name);
}
