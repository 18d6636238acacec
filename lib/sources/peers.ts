/**
 * Peers (SPEC S1.1, the `casper` transport): one program hosting many tools. The protocol:
 *
 * - `<peer> tools --json` prints a JSON list of `{name, description, parameters}` — read once
 *   at start-up and cached by the program's identity stamp, like `--help`;
 * - `<peer> run <tool>` gets the call's arguments as one JSON object on stdin and prints the
 *   result: plain text (said), or one JSON object `{"said": …, "shown": …, "is_error": …}`,
 *   or a question `{"ask": …, "choices": […]}`; a non-zero exit status is an error result.
 *
 * Peers are named in config (`peers`: name → program); with no `peers` key the default peer
 * `casper` is used when a `casper` program is on PATH.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { dirname, isAbsolute, resolve } from "node:path";
import { processOutcome } from "../exec/outcome.ts";
import { spawnProcess } from "../exec/spawn.ts";
import { spawnCollecting } from "../exec/collect.ts";
import { stampOf } from "./discovery_cache.ts";
import { parseQuestion } from "./program_call.ts";
import { schemaProblem, stripExtensions } from "../core/json_schema.ts";
import type { StampCache } from "../core/stamp_cache.ts";
import type { Declaration, Invocation, JsonSchema, Outcome, Tool, Warn } from "../core/types.ts";
import { hostProgram, type HostScope } from "../core/program.ts";
import { parseJsonObject } from "../core/json_object.ts";

/** The peer name used when the config names none. */
export const DEFAULT_PEER = "casper";
/** Limits of one `tools --json` visit. */
export const LIST_TIMEOUT_MS = 5000;
export const LIST_MAX_BYTES = 1024 * 1024;
/** A JSON result larger than this (bytes) is passed on as plain text, streamed. */
const RESULT_JSON_MAX_BYTES = 4 * 1024 * 1024;

/** A configured peer. */
export interface Peer {
  name: string;
  /** Absolute path of the program. */
  program: string;
}

/**
 * What `tools --json` gave, checked (so a warm start need not check schemas again): the
 * usable declarations and why each other entry was left out, or why the peer gives none.
 */
export interface PeerListing {
  tools?: Declaration[];
  /** One line per entry left out. */
  bad?: string[];
  problem?: string;
}

/**
 * The configured peers. A value with a "/" is a path (relative to the config file that set
 * it); a bare name — the implicit default `casper` too — is looked up on PATH's folders
 * outside the roots and the temp folder (`hostProgram`: a sandboxed call can write
 * `./node_modules/.bin/casper`, and `tools --json` runs on the host at every start). A
 * configured peer that cannot be found costs one warn line; the default is silently absent.
 *
 * @param configured the `peers` config value, if set
 * @param origin the file that set it, for relative paths
 * @param host where bare names are not looked up (the roots, but their protected PATH folders)
 */
export function configuredPeers(
  configured: Readonly<Record<string, string>> | undefined,
  origin: string | undefined,
  env: Record<string, string>,
  warn: Warn,
  host: HostScope,
): Peer[] {
  const entries = configured ? Object.entries(configured) : [[DEFAULT_PEER, DEFAULT_PEER]];
  const base = origin && isAbsolute(origin) ? dirname(origin) : Deno.cwd();
  const peers: Peer[] = [];
  for (const [name, value] of entries) {
    const program = value.includes("/") ? resolve(base, value) : hostProgram(value, env.PATH, host);
    let usable = program !== undefined;
    if (program && value.includes("/")) {
      try {
        usable = Deno.statSync(program).isFile;
      } catch {
        usable = false;
      }
    }
    if (!usable || !program) {
      if (configured) warn(`peer "${name}": no program ${JSON.stringify(value)} found`);
      continue;
    }
    peers.push({ name, program });
  }
  return peers;
}

/** What peer discovery needs. */
export interface PeerDiscovery {
  peers: readonly Peer[];
  /** The environment `tools --json` runs with. */
  env: Record<string, string>;
  cwd: string;
  cache: StampCache<PeerListing>;
  warn: Warn;
}

/**
 * Asks every peer for its tools (in parallel, cached by stamp) and makes registry entries.
 * A broken listing costs one warn line for that peer; a bad entry costs one line for that tool.
 */
export async function peerTools(opts: PeerDiscovery): Promise<Tool[]> {
  const lists = await Promise.all(opts.peers.map((peer) => listing(peer, opts)));
  const tools: Tool[] = [];
  for (const [i, peer] of opts.peers.entries()) {
    const list = lists[i];
    if (list.problem) {
      opts.warn(`peer "${peer.name}" (${peer.program}) gives no tools: ${list.problem}`);
      continue;
    }
    for (const bad of list.bad ?? []) opts.warn(`peer "${peer.name}" (${peer.program}): ${bad}`);
    for (const declaration of list.tools ?? []) {
      tools.push(peerTool(peer, declaration, declaration.name));
    }
  }
  return tools;
}

async function listing(peer: Peer, opts: PeerDiscovery): Promise<PeerListing> {
  let stamp: string;
  try {
    stamp = stampOf(Deno.statSync(peer.program));
  } catch (error) {
    return { problem: `cannot read it (${(error as Error).name})` };
  }
  const cached = opts.cache.get(peer.program, stamp);
  if (cached) return cached;
  const fresh = await askForTools(peer, opts);
  opts.cache.set(peer.program, stamp, fresh);
  return fresh;
}

async function askForTools(peer: Peer, opts: PeerDiscovery): Promise<PeerListing> {
  const spawned = await spawnCollecting({
    program: peer.program,
    args: ["tools", "--json"],
    cwd: opts.cwd,
    env: opts.env,
    timeoutMs: LIST_TIMEOUT_MS,
    maxStdoutBytes: LIST_MAX_BYTES,
  });
  if (spawned.startError) return { problem: spawned.startError };
  if (spawned.timedOut) {
    return { problem: `"tools --json" did not finish within ${LIST_TIMEOUT_MS / 1000} s` };
  }
  if (spawned.capped) {
    return { problem: `"tools --json" printed more than ${LIST_MAX_BYTES} bytes` };
  }
  if (spawned.code !== 0) {
    return {
      problem: `"tools --json" ended with ${
        spawned.signal ? `signal ${spawned.signal}` : `exit status ${spawned.code}`
      }`,
    };
  }
  const text = new TextDecoder().decode(spawned.stdout);
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { problem: `"tools --json" printed no JSON (${(error as Error).message})` };
  }
  if (!Array.isArray(data)) return { problem: `"tools --json" printed JSON that is not a list` };
  const listing: Required<Omit<PeerListing, "problem">> = { tools: [], bad: [] };
  for (const [i, entry] of data.entries()) {
    const declaration = peerDeclaration(entry);
    if (typeof declaration === "string") {
      listing.bad.push(`tool #${i + 1} left out: ${declaration}`);
    } else listing.tools.push(declaration);
  }
  return listing;
}

/** Checks one entry of a peer's list; returns the declaration or what is wrong. */
export function peerDeclaration(entry: unknown): Declaration | string {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    return "not a JSON object";
  }
  const e = entry as Record<string, unknown>;
  if (typeof e.name !== "string" || e.name === "") return 'no "name"';
  if (typeof e.description !== "string" || e.description.trim() === "") {
    return `tool "${e.name}" has no "description"`;
  }
  const parameters = (e.parameters ?? { type: "object", properties: {} }) as JsonSchema;
  const problem = schemaProblem(parameters);
  if (problem) return `tool "${e.name}": parameters: ${problem}`;
  return { name: e.name, description: e.description, parameters: stripExtensions(parameters) };
}

/**
 * Makes a registry entry of a peer's tool.
 *
 * @param remote the tool's name inside the peer (`<peer> run <remote>`)
 */
export function peerTool(peer: Peer, declaration: Declaration, remote: string): Tool {
  const properties = (declaration.parameters.properties ?? {}) as Record<string, unknown>;
  return {
    declaration,
    origin: { source: "peer", where: `${peer.name} ${peer.program}` },
    ownsCallFields: "cwd" in properties || "timeout_seconds" in properties,
    invoke: (call) => invokePeer(peer, remote, call),
  };
}

/**
 * Runs `<peer> run <tool>` for one call. stdout that starts with "{" is held (up to 4 MiB) and
 * read as a JSON result when it is one; anything else streams to said as it comes.
 */
export async function invokePeer(peer: Peer, remote: string, call: Invocation): Promise<Outcome> {
  let held: Uint8Array[] | undefined;
  let heldBytes = 0;
  let decided = false;
  const flush = async () => {
    for (const chunk of held ?? []) await call.emit.said(chunk);
    held = undefined;
  };
  // Inside the policy's sandbox when it is on.
  // A peer's program may ask on the approvals socket, as a tools folder's does.
  const command = call.sandbox?.(peer.program, ["run", remote], { ownSockets: true }) ??
    { program: peer.program, args: ["run", remote] };
  const spawned = await spawnProcess({
    program: command.program,
    args: command.args,
    restart: command.restart,
    cwd: call.cwd,
    env: call.env,
    stdin: JSON.stringify(call.args),
    timeoutMs: call.timeoutMs,
    signal: call.signal,
    onStdout: async (chunk) => {
      if (!decided) {
        const text = new TextDecoder().decode(chunk.subarray(0, 64)).trimStart();
        if (text === "") {
          (held ??= []).push(chunk.slice());
          return;
        }
        decided = true;
        if (text.startsWith("{")) held ??= [];
        else {
          await flush();
          return await call.emit.said(chunk);
        }
      }
      if (held) {
        held.push(chunk.slice());
        heldBytes += chunk.length;
        if (heldBytes > RESULT_JSON_MAX_BYTES) await flush();
        return;
      }
      await call.emit.said(chunk);
    },
  });
  const outcome = processOutcome(spawned, call.timeoutMs);
  if (!held) return outcome;
  const text = new TextDecoder().decode(Buffer.concat(held));
  const question = parseQuestion(text);
  if (question && !outcome.isError) return { isError: false, ask: question };
  const result = structured(text);
  if (!result) {
    await flush();
    return outcome;
  }
  await call.emit.said(result.said);
  if (result.shown !== undefined) await call.emit.shown(result.shown);
  return result.isError && !outcome.isError ? { isError: true } : outcome;
}

function structured(text: string): { said: string; shown?: string; isError: boolean } | null {
  const r = parseJsonObject(text);
  if (typeof r?.said !== "string") return null;
  return {
    said: r.said,
    shown: typeof r.shown === "string" ? r.shown : undefined,
    isError: r.is_error === true,
  };
}
