/**
 * The builtin source: tools compiled into magi (SPEC S6). A builtin returns data — said,
 * shown, an error flag — and never prints, bounds, masks or asks for permission itself:
 * the pipeline does all of that.
 *
 * @module
 */
import { builtinEffects } from "../../policy/effects.ts";
import { stripExtensions } from "../../core/json_schema.ts";
import { closedObject as closedSchema } from "../../core/closed_object.ts";
import type { Invocation, JsonSchema, Tool } from "../../core/types.ts";
import type { ErrorCode } from "../../core/errors.ts";
import type { HiddenSet } from "../../confinement/sandbox_paths.ts";

/** What a builtin gets for one call. */
export interface BuiltinContext {
  /** Absolute working directory of the call. */
  cwd: string;
  /** Environment for any child process it starts (tool links first on PATH). */
  env: Record<string, string>;
  /** Time limit in milliseconds. */
  timeoutMs: number;
  signal: AbortSignal;
  /** The allowed roots (real absolute paths) that file builtins check paths against. */
  roots: readonly string[];
  /** The most bytes `write` and `edit` may put in a file (`limits.write_bytes`). */
  writeBytes?: number;
  /** What the file builtins refuse as the sandbox hides it (credential stores, magi's own). */
  hidden?: HiddenSet;
  /** More paths `write` and `edit` refuse: programs magi runs later (hooks, MCP servers, magi). */
  protect?: readonly string[];
  /** Set when the policy's sandbox is on: wraps a program and its arguments (SPEC S8). */
  sandbox?: Invocation["sandbox"];
  /** For builtins that stream (such as `run`): output for the model as it comes. */
  said(chunk: Uint8Array | string): Promise<void>;
}

/** What a builtin returns. Streamed said (via the context) comes before this said. */
export interface BuiltinResult {
  said: string | Uint8Array;
  /** For the person; absent means the same as said. */
  shown?: string;
  isError?: boolean;
  /** What kind of failure an error is (`lib/core/errors.ts`). */
  code?: ErrorCode;
  /** A status line appended after the bounded output, such as "[magi: exit status 2]". */
  note?: string;
  /** The session's new working directory (absolute), when the call changed it. */
  cwd?: string;
}

/** A builtin's definition. */
export interface Builtin {
  name: string;
  /** Summary line, then usage line (the `--help` contract). */
  description: string;
  /** JSON Schema object with an `x-magi` argv mapping (for `magi builtin NAME ARGS…`). */
  parameters: JsonSchema;
  run(args: Record<string, unknown>, ctx: BuiltinContext): Promise<BuiltinResult>;
}

/**
 * A builtin's parameters: a JSON Schema object of exactly `properties` (no others), with
 * its `x-magi` argv mapping.
 */
export function closedObject(
  properties: Record<string, JsonSchema>,
  required: string[],
  xMagi: JsonSchema,
): JsonSchema {
  return { ...closedSchema(properties, required), "x-magi": xMagi };
}

/** What every builtin shares, from the runtime. */
export interface BuiltinSettings {
  /** The allowed roots (real absolute paths). */
  roots: readonly string[];
  /**
   * Where the body runs, when not in magi's own process: the policy's Worker for builtins
   * Deno's permissions confine (`lib/sources/builtins/body_worker.ts`). Undefined: in-process.
   */
  body?: (builtin: Builtin) => Builtin["run"] | undefined;
}

/** Makes a registry entry of a builtin. */
export function builtinTool(builtin: Builtin, settings: BuiltinSettings): Tool {
  const parameters = stripExtensions(builtin.parameters);
  const properties = (parameters.properties ?? {}) as Record<string, unknown>;
  return {
    declaration: { name: builtin.name, description: builtin.description, parameters },
    origin: { source: "builtin", where: `magi:${builtin.name}` },
    ownsCallFields: "cwd" in properties || "timeout_seconds" in properties,
    effects: (args, cwd) => builtinEffects(builtin.name, args, cwd),
    invoke: async (call: Invocation) => {
      const run = settings.body?.(builtin) ?? ((args, ctx) => builtin.run(args, ctx));
      const result = await run(call.args, {
        cwd: call.cwd,
        env: call.env,
        timeoutMs: call.timeoutMs,
        signal: call.signal,
        roots: settings.roots,
        sandbox: call.sandbox,
        said: (chunk) => call.emit.said(chunk),
      });
      await call.emit.said(result.said);
      if (result.shown !== undefined) await call.emit.shown(result.shown);
      return {
        isError: result.isError === true,
        code: result.code,
        note: result.note,
        cwd: result.cwd,
      };
    },
  };
}
