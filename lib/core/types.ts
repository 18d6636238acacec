/**
 * The shapes every source of tools shares: the declaration the model sees, the tool entry the
 * registry holds, and what a call hands to a transport.
 *
 * @module
 */

import type { ErrorCode } from "./errors.ts";

/** A JSON Schema object (draft 2020-12 or draft-07 vocabulary). */
/**
 * What a call does, as its tool declares it: paths it reads and writes, programs it starts,
 * whether it uses the network; `opaque` when the tool cannot say (an MCP server's tool).
 */
export interface Effects {
  reads: string[];
  writes: string[];
  /** Programs the call starts (the first word of each command, or a tool's executable). */
  starts: string[];
  network: boolean;
  opaque?: boolean;
  /** A Lua body: each program it starts (`magi.exec`) passes the door when it starts it. */
  execsAtRun?: boolean;
}

export type JsonSchema = Record<string, unknown>;

/** What the model is shown for one tool (SPEC S1.2): exactly what `magi tools --json` prints. */
export interface Declaration {
  /** Matches `^[a-zA-Z0-9_-]{1,64}$`. */
  name: string;
  description: string;
  /** A JSON Schema object with extension keys (`x-…`) removed. */
  parameters: JsonSchema;
}

/** Where a tool came from, for messages and `magi tools`. */
export interface Origin {
  /** The kind of source: "builtin", "tools_dir", "lua", "peer", "mcp". */
  source: string;
  /** A file, folder or server that identifies it, such as `/home/a/tools/wc-lines`. */
  where: string;
  /**
   * Set for tools from the project's own `.magi/` folder: a cloned repository's files, not
   * the person's. Such a tool never takes the name of a builtin (see `Registry`).
   */
  project?: boolean;
}

/** Where output of a call goes; the pipeline owns it, so no transport can bypass it. */
export interface Emit {
  /** Text for the model (and for the person, unless `shown` is emitted). */
  said(chunk: Uint8Array | string): Promise<void>;
  /** Text for the person only. Once anything is emitted here, shown is this and not said. */
  shown(chunk: Uint8Array | string): Promise<void>;
  /**
   * Content that is not text, passed on beside said (which describes it): an MCP image,
   * audio or embedded resource. The pipeline masks and caps it (`pipeline/attachments.ts`).
   */
  attach?(attachment: Attachment): void;
  /** A JSON object result (MCP `structuredContent`); the pipeline masks and bounds it. */
  structured?(value: Record<string, unknown>): void;
}

/** Content that is not text: an MCP image, audio, resource or resource_link block. */
export interface Attachment {
  /** The content block as MCP gives it (base64 in `data` or `resource.blob`). */
  block: Record<string, unknown> & { type: "image" | "audio" | "resource" | "resource_link" };
  /** Its MIME type, when known. */
  mimeType?: string;
  /** The file its (masked) bytes were saved to, as said names it. */
  path?: string;
}

/**
 * How far a call has come, as MCP `notifications/progress` gives it: `progress` grows with
 * each report; `total` when known; `message` masked by the pipeline.
 */
export interface Progress {
  progress: number;
  total?: number;
  message?: string;
}

/** Everything a transport gets for one call. */
export interface Invocation {
  /** The validated arguments, without `cwd` and `timeout_seconds` unless the tool declares them. */
  args: Record<string, unknown>;
  /** Absolute working directory of the call. */
  cwd: string;
  /** Time limit in milliseconds. */
  timeoutMs: number;
  /** Aborted when the call is cancelled. */
  signal: AbortSignal;
  /** Environment for child processes: PATH with the tool links first, and the MAGI_* context. */
  env: Record<string, string>;
  emit: Emit;
  /**
   * Asks the person a question in the middle of the call (an MCP server's elicitation), the
   * question masked first; undefined when no one can answer. Absent when there is no way to ask.
   */
  ask?: (question: Question) => Promise<string | undefined>;
  /**
   * Reports how far the call has come (an MCP server's `notifications/progress`); absent when
   * no one listens, and then the transport asks for no progress.
   */
  progress?: (progress: Progress) => void;
  /**
   * Where an upstream MCP server's own requests during the call go on to: the caller's MCP
   * client (`magi mcp`'s), masked both ways by the pipeline. Absent outside `magi mcp`.
   */
  relay?: Relay;
  /**
   * The sandbox the door chose for this call (SPEC S8; absent: unsandboxed, `--sandbox off`):
   * turns a program and its arguments into the command that runs them inside it. A transport
   * that starts a program must use it. `ownSockets`: the program may reach the call's own unix
   * sockets (`MAGI_APPROVAL_SOCK`, the permission broker) — a tools folder's program or a
   * peer's; otherwise it cannot make a unix socket (unless `sandbox.unix_sockets`).
   */
  sandbox?: (
    program: string,
    args: string[],
    opts?: { ownSockets?: boolean },
  ) => { program: string; args: string[]; env?: Record<string, string>; restart?: Restart };
}

/**
 * How a command whose start failed may be started again (the sandbox: a socket it covers went
 * away while bwrap set it up; see `lib/confinement/sandbox_restart.ts`). Given to the one
 * process starter (`spawnProcess`), which holds back stderr while it begins with `prefix` and
 * nothing came on stdout; when the program then ends with status 1, `again` gets that stderr
 * and answers the command to start instead (same stdin, same callbacks), `{ fail }` (the call
 * did not run: that line is its error), or undefined (the outcome stands, stderr delivered).
 */
export interface Restart {
  prefix: string;
  again(
    stderr: string,
  ): { program: string; args: string[]; restart?: Restart } | { fail: string } | undefined;
}

/** How a call ended, as the transport saw it. */
export interface Outcome {
  isError: boolean;
  /** What kind of failure an error is (`lib/core/errors.ts`); the pipeline fills in the rest. */
  code?: ErrorCode;
  /** A status to append after the bounded output, such as "exit status 2" and stderr's tail. */
  note?: string;
  /** The session's new working directory (absolute), when the call changed it (`cd` in `run`). */
  cwd?: string;
  /**
   * A question instead of a result (SPEC S3.6): the pipeline asks the person and invokes the
   * tool again with the answer merged into the arguments as `answered`.
   */
  ask?: Question;
}

/**
 * Requests an upstream MCP server makes during a call (`sampling/createMessage`,
 * `elicitation/create`) passed on whole to the MCP client that made the call — only the ones
 * that client declared. Params and results are MCP's, as JSON; the pipeline masks both
 * ways. `owner` names the client (its connection): requests are passed on only while every
 * call of that server in progress belongs to the same one.
 */
export interface Relay {
  owner: object;
  /** @throws Error when the client refuses or fails */
  sampling?: (params: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>;
  /** @throws Error when the client fails (declining is a result) */
  elicitation?: (params: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>;
}

/** What a tool asks the person; an answer must be one of `choices` when they are given. */
export interface Question {
  question: string;
  choices?: string[];
}

/** One entry of the registry. */
export interface Tool {
  declaration: Declaration;
  origin: Origin;
  /** Names from `cwd`/`timeout_seconds` that the tool declares itself (they reach it as is). */
  ownsCallFields?: boolean;
  /**
   * What a call does (read, write, start, network; or opaque), for the door
   * (`lib/policy/door.ts`); absent: what the tool's source implies (`lib/policy/effects.ts`).
   */
  effects?(args: Record<string, unknown>, cwd: string): Effects;
  /** Runs one call. May throw: the pipeline turns a throw into an error result. */
  invoke(call: Invocation): Promise<Outcome>;
  /** What MCP lists beside the declaration (from an MCP server's tool; served by `magi mcp`). */
  listing?: Listing;
}

/** An MCP tool's `title`, `outputSchema` and `annotations`, masked. */
export interface Listing {
  title?: string;
  outputSchema?: JsonSchema;
  annotations?: Record<string, unknown>;
}

/** A problem with one tool or file, reported on stderr as one line. */
export type Warn = (message: string) => void;
