/**
 * `resources/subscribe` and `resources/unsubscribe` for the resources `magi mcp` serves (those
 * of the MCP servers magi reaches, serve_catalog.ts). A subscription goes to the upstream
 * server that declared `resources.subscribe` and lists the URI (else the first such server
 * that accepts it); its `notifications/resources/updated` go on to every client that
 * subscribed to that URI there, the URI masked. magi subscribes upstream once per URI, however
 * many clients watch it, and unsubscribes when the last one unsubscribes or goes away.
 * A server that ended and is started again (at the next call of one of its tools or any
 * other request) is subscribed again to every URI still watched there before anything else
 * reaches it, so its clients go on hearing of changes; a URI it no longer takes is dropped.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/index"
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { invalidParams } from "./call_request.ts";
import { type CatalogOptions, pages, reach } from "../sources/mcp/catalog.ts";
import { mcpCatalog, onMcpResourceUpdated, onMcpServerStarted } from "../sources/mcp/client.ts";

/** One URI watched at one upstream server, and the clients (their servers) told of changes. */
interface Watch {
  server: string;
  uri: string;
  client: Client;
  subscribers: Set<Server>;
}

/** Every watch of this process, by upstream server name and URI. */
const watches = new Map<string, Watch>();
const keyOf = (server: string, uri: string) => `${server}\u0000${uri}`;
let listening = false;

/** Tells each subscriber of (server, uri) that it changed, the URI masked. */
function updated(server: string, uri: string): void {
  const watch = watches.get(keyOf(server, uri));
  const masker = mcpCatalog()?.masker;
  if (!watch || !masker) return;
  for (const subscriber of watch.subscribers) {
    subscriber.sendResourceUpdated({ uri: masker.maskText(uri) }).catch(() => {
      // That client is gone; its close drops it.
    });
  }
}

/** The upstream servers that can take a subscription to `uri`, the ones listing it first. */
async function candidates(cat: CatalogOptions, uri: string): Promise<[string, Client][]> {
  const { clients } = await reach(cat, undefined, "resources");
  const able = clients.filter(([, c]) => c.getServerCapabilities()?.resources?.subscribe);
  if (able.length < 2) return able;
  const lists = await Promise.all(able.map(async ([, client]) => {
    const items = await pages((cursor) =>
      client.listResources(cursor ? { cursor } : undefined)
        .then((r) => ({ items: r.resources, nextCursor: r.nextCursor }))
    ).catch(() => []);
    return items.some((r) => r.uri === uri);
  }));
  return [...able.filter((_, i) => lists[i]), ...able.filter((_, i) => !lists[i])];
}

/**
 * Subscribes `server`'s new client (it was started again) to every URI watched there; a URI
 * it refuses now is no longer watched.
 */
async function renew(server: string, client: Client): Promise<void> {
  const stale = [...watches.values()].filter((w) => w.server === server && w.client !== client);
  await Promise.all(stale.map(async (watch) => {
    watch.client = client;
    try {
      await client.subscribeResource({ uri: watch.uri });
    } catch {
      watches.delete(keyOf(watch.server, watch.uri));
    }
  }));
}

/** Drops `subscriber` from `watch`; the last one gone unsubscribes upstream. */
function leave(watch: Watch, subscriber: Server): void {
  watch.subscribers.delete(subscriber);
  if (watch.subscribers.size > 0) return;
  watches.delete(keyOf(watch.server, watch.uri));
  watch.client.unsubscribeResource({ uri: watch.uri }).catch(() => {
    // The upstream server went away: nothing is watched there any more.
  });
}

/** Whether `magi mcp` can take subscriptions: it reaches MCP servers. */
export function canSubscribe(): boolean {
  return (mcpCatalog()?.servers().length ?? 0) > 0;
}

/** Registers the subscribe and unsubscribe handlers on `server` (one client's connection). */
export function serveSubscriptions(server: Server): void {
  if (!listening) {
    listening = true;
    onMcpResourceUpdated(updated);
    onMcpServerStarted(renew);
  }
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const uri = request.params.uri;
    const held = [...watches.values()].find((w) => w.uri === uri);
    if (held) {
      held.subscribers.add(server);
      return {};
    }
    const cat = mcpCatalog();
    const found = cat ? await candidates(cat, uri) : [];
    let last = "";
    for (const [name, client] of found) {
      try {
        await client.subscribeResource({ uri });
      } catch (error) {
        last = (error as Error).message.replace(/^MCP error -?\d+: /, "");
        continue;
      }
      // Another request may have subscribed meanwhile: one watch per server and URI.
      const key = keyOf(name, uri);
      const watch = watches.get(key) ?? { server: name, uri, client, subscribers: new Set() };
      watch.subscribers.add(server);
      watches.set(key, watch);
      return {};
    }
    throw invalidParams(
      last || `No MCP server magi reaches can watch "${uri}" (none declares subscriptions)`,
    );
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    for (const watch of [...watches.values()]) {
      if (watch.uri === request.params.uri) leave(watch, server);
    }
    return {};
  });
  // A client that goes away stops watching (the stdio connection's end ends magi too).
  const before = server.onclose;
  server.onclose = () => {
    before?.();
    for (const watch of [...watches.values()]) leave(watch, server);
  };
}
