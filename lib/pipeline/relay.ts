/**
 * An upstream MCP server's requests passed on to the caller's MCP client ({@link Relay}),
 * masked both ways like every byte that leaves magi: what the server asks is masked before
 * the client sees it, and what the client answers is masked before the server gets it.
 *
 * @module
 */
import type { Relay } from "../core/types.ts";
import { maskedJson } from "./attachments.ts";
import type { Masker } from "./mask.ts";

type Pass = (params: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>;

/** `relay` with every string of each request and each result masked (object keys too). */
export function maskedRelay(relay: Relay, masker: Masker): Relay {
  const wrap = (pass: Pass): Pass => async (params, signal) => {
    const out = maskedJson(params, masker) as Record<string, unknown>;
    return maskedJson(await pass(out, signal), masker);
  };
  return {
    owner: relay.owner,
    ...(relay.sampling ? { sampling: wrap(relay.sampling) } : {}),
    ...(relay.elicitation ? { elicitation: wrap(relay.elicitation) } : {}),
  };
}
