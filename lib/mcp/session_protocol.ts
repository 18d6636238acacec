/**
 * The protocol revision an HTTP session negotiated, and requests judged by it. The SDK's
 * Streamable HTTP transport decides per request, from its `MCP-Protocol-Version` header,
 * whether a POST's SSE stream may start with a priming event (an event id and empty data, so
 * the client can resume it, with the `retry` time) — sent only from 2025-11-25 on, since empty
 * data breaks older clients. A client that negotiated 2025-11-25 at `initialize` handles them,
 * whatever a later header says: for such a session a request whose header names an older
 * revision (magi supports) is handled as the negotiated one. A session that negotiated an
 * older revision is left as it is.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import {
  isInitializeRequest,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";

const HEADER = "mcp-protocol-version";

/** One session's negotiated revision, learnt from its `initialize` request. */
export class SessionProtocol {
  #negotiated: string | undefined;

  /** Watches `transport`'s incoming messages (call after the server connected to it). */
  watch(transport: Transport): void {
    const inner = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (isInitializeRequest(message)) {
        const asked = message.params.protocolVersion;
        // The SDK's server answers with the asked revision when it supports it, else its latest.
        this.#negotiated = SUPPORTED_PROTOCOL_VERSIONS.includes(asked)
          ? asked
          : LATEST_PROTOCOL_VERSION;
      }
      inner?.(message, extra);
    };
  }

  /**
   * `request`, with its protocol header raised to the negotiated revision when it names an
   * older supported one; otherwise `request` itself (an unsupported header is the SDK's 400).
   */
  judged(request: Request): Request {
    const declared = request.headers.get(HEADER);
    const negotiated = this.#negotiated;
    if (
      !declared || !negotiated || declared >= negotiated ||
      !SUPPORTED_PROTOCOL_VERSIONS.includes(declared)
    ) {
      return request;
    }
    const headers = new Headers(request.headers);
    headers.set(HEADER, negotiated);
    return new Request(request, { headers });
  }
}
