/**
 * Resumability for `magi mcp --http`: the SDK's `EventStore` kept in memory, bounded, so a
 * client whose SSE stream broke can reconnect with `Last-Event-ID` and receive what it missed
 * (MCP Streamable HTTP, "Resumability and Redelivery").
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/server/webStandardStreamableHttp"
import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How much one session keeps for replay (characters of JSON); older events go first. */
export const MAX_CHARS = 8 * 1024 * 1024;

interface Kept {
  streamId: string;
  message: JSONRPCMessage;
  size: number;
}

/** An in-memory event store holding the latest events of one session, up to a size. */
export class BoundedEventStore implements EventStore {
  readonly #events = new Map<string, Kept>();
  #next = 0;
  #size = 0;

  /** @param max characters of JSON kept at most */
  constructor(private readonly max = MAX_CHARS) {}

  /** Stores one event; returns its id. */
  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${++this.#next}`;
    const size = JSON.stringify(message).length;
    this.#events.set(id, { streamId, message, size });
    this.#size += size;
    for (const [old, kept] of this.#events) {
      if (this.#size <= this.max || old === id) break;
      this.#events.delete(old);
      this.#size -= kept.size;
    }
    return Promise.resolve(id);
  }

  /** The stream an event belongs to, if it is still kept. */
  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return Promise.resolve(this.#events.get(eventId)?.streamId);
  }

  /** Sends every kept event of the same stream after `lastEventId`; returns the stream id. */
  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const last = this.#events.get(lastEventId);
    if (!last) return "";
    let after = false;
    for (const [id, event] of this.#events) {
      if (id === lastEventId) after = true;
      else if (after && event.streamId === last.streamId) await send(id, event.message);
    }
    return last.streamId;
  }
}
