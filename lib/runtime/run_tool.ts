/**
 * `runTool`: the only path a tool call takes (SPEC S2). It checks the arguments, hands the
 * call to the tool's transport with output channels it owns, and masks, bounds and spills
 * every byte the transport emits — in that order — whatever the transport is.
 *
 * @module
 */
import { isAbsolute, resolve } from "node:path";
import { argumentsProblem } from "../core/json_schema.ts";
import { type AnswerProvider, invokeAsking } from "../pipeline/ask.ts";
import type { Attachment, Outcome, Progress, Relay } from "../core/types.ts";
import { maskedRelay } from "../pipeline/relay.ts";
import { Extras } from "../pipeline/attachments.ts";
import { childEnv } from "../exec/env.ts";
import { type Approver, type Caller, guardedFor } from "../policy/gate.ts";
import type { Runtime } from "./runtime.ts";
import { Channel } from "../pipeline/channel.ts";
import { afterTool, beforeTool } from "./hooks/tool_hooks.ts";
import { type CodedError, type ErrorCode, errorMessage } from "../core/errors.ts";

/**
 * The longest time limit, in milliseconds: what a timer can hold (2^31 − 1 ms, about 24.8
 * days). A longer one is cut to this, so no timer overflows into an instant time-out.
 */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A call as a model or a person makes it. */
export interface ToolCall {
  name: string;
  /** The arguments: an object, or its JSON text. */
  args: unknown;
  signal?: AbortSignal;
  /**
   * Who makes the call (SPEC S8.1): "person" (`magi call`; the policy's `ask` counts as
   * approved) or "model" (the default; `ask` needs `approve`, else it is a denial).
   */
  caller?: Caller;
  /** Asks the person about a model's call the policy asks about (a terminal is at hand). */
  approve?: Approver;
  /** Answers the tool's questions (SPEC S3.6); without it a question ends as an error result. */
  answer?: AnswerProvider;
  /** Why a question gets no answer here, and what would give one (see `AskOptions`). */
  unanswered?: string;
  /** Hears the tool's progress reports (their message masked); without it none are asked for. */
  progress?: (progress: Progress) => void;
  /** Passes an upstream MCP server's requests on to the caller's MCP client (`magi mcp`). */
  relay?: Relay;
}

/** A tool result (SPEC S2.1), as `magi call --json` prints it. */
export interface ToolResult {
  name: string;
  /** What the model reads: masked and bounded to `limits.said_bytes`. */
  said: string;
  /** What the person sees: masked and bounded to `limits.shown_bytes`. */
  shown: string;
  is_error: boolean;
  /** Absolute path of the file holding the whole (masked) output, when it was cut. */
  spill: string | null;
  /** An error result's kind and one-line message (`lib/core/errors.ts`); absent on success. */
  error?: CodedError;
  /** Images, audio and embedded resources besides said (masked, capped), when any. */
  attachments?: Attachment[];
  /** The structured result (MCP `structuredContent`; masked, bounded), when there is one. */
  structured?: Record<string, unknown>;
}

/**
 * Bytes of a limit kept free for the status note appended after bounding (exit status and
 * stderr's tail), so said and shown stay within their limits.
 */
function noteRoom(limit: number): number {
  return Math.min(1800, Math.floor(limit / 4));
}

/** Appends the status note, cut (keeping its first line and its end) to fit its room. */
function appendNote(text: string, note: string | undefined, limit: number): string {
  if (!note) return text;
  const room = noteRoom(limit);
  let fitted = note;
  if (new TextEncoder().encode(note).length > room) {
    const [first, ...rest] = note.split("\n");
    let tail = rest;
    while (
      tail.length > 0 && new TextEncoder().encode([first, "…", ...tail].join("\n")).length > room
    ) {
      tail = tail.slice(1);
    }
    fitted = [first.slice(0, room), ...(tail.length < rest.length ? ["…"] : []), ...tail].join(
      "\n",
    );
  }
  return text + (text === "" || text.endsWith("\n") ? "" : "\n") + fitted + "\n";
}

/**
 * Runs one tool call through the pipeline. Never throws for anything a tool or its
 * arguments do: an unknown tool, bad JSON, a schema violation, a crash, a time-out and a
 * transport that throws all come back as a result with `is_error: true` (SPEC S2.6).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 * import { createRuntime } from "./runtime.ts";
 * import { runTool } from "./run_tool.ts";
 * const home = await Deno.realPath(await Deno.makeTempDir());
 * await Deno.writeTextFile(join(home, "a.txt"), "one\ntwo\n");
 * const env = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: home };
 * const rt = await createRuntime({ cwd: home, env, warn: () => {} });
 * const read = await runTool(rt, { name: "read", args: { path: "a.txt" } });
 * assert.equal(read.is_error, false);
 * assert.match(read.said, /two/);
 * const wrong = await runTool(rt, { name: "read", args: "{not json" });
 * assert.equal(wrong.error?.code, "bad_arguments");
 * await Deno.remove(home, { recursive: true });
 * ```
 */
export async function runTool(rt: Runtime, given: ToolCall): Promise<ToolResult> {
  // Hooks (config `hooks`): before_tool may refuse the call or approve an ask (lib/hooks/).
  const hooked = await beforeTool(rt, given);
  const call = { ...given, approve: hooked.approve };
  const limits = rt.limits;
  const said = new Channel(
    rt.masker,
    [
      limits.saidBytes - noteRoom(limits.saidBytes),
      limits.shownBytes - noteRoom(limits.shownBytes),
    ],
    rt.spillDir,
    call.name,
    limits.spillBytes,
  );
  let shown: Channel | undefined;
  const extras = new Extras(rt.masker, limits.saidBytes);
  let outcome: Outcome;
  const prepared: Prepared | Unprepared = hooked.refused !== undefined
    ? { code: "denied", note: hooked.refused }
    : prepare(rt, call);
  if ("note" in prepared) {
    outcome = { isError: true, ...prepared };
  } else {
    const { tool: bare, args, cwd, timeoutMs } = prepared;
    // The policy decides here, for this invocation and each one resumed with an answer.
    const tool = guardedFor(rt, call, bare);
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    call.signal?.addEventListener("abort", onAbort);
    if (call.signal?.aborted) controller.abort();
    try {
      const check = (a: Record<string, unknown>) =>
        argumentsProblem(tool.declaration.parameters, a);
      outcome = await invokeAsking(tool, {
        args,
        cwd,
        timeoutMs,
        signal: controller.signal,
        env: childEnv(rt.toolEnv, rt.linksDir, {
          ...rt.context,
          MAGI_CWD: cwd,
          MAGI_CALLER: call.caller ?? "model",
        }),
        ask: call.answer && ((q) =>
          call.answer!({
            question: rt.masker.maskText(q.question),
            ...(q.choices ? { choices: q.choices.map((c) => rt.masker.maskText(c)) } : {}),
          })),
        ...(call.progress
          ? {
            progress: (p: Progress) =>
              call.progress!(
                p.message === undefined ? p : { ...p, message: rt.masker.maskText(p.message) },
              ),
          }
          : {}),
        ...(call.relay ? { relay: maskedRelay(call.relay, rt.masker) } : {}),
        emit: {
          said: (chunk) => said.push(chunk),
          shown: (chunk) => {
            shown ??= new Channel(
              rt.masker,
              [limits.shownBytes - noteRoom(limits.shownBytes)],
              rt.spillDir,
              call.name + "-shown",
              limits.spillBytes,
            );
            return shown.push(chunk);
          },
          attach: (a) => extras.attach(a),
          structured: (value) => extras.setStructured(value),
        },
      }, {
        answer: call.answer,
        unanswered: call.unanswered,
        check,
        mask: (text) => rt.masker.maskText(text),
      });
    } catch (error) {
      outcome = {
        isError: true,
        note: `[magi: the tool failed: ${(error as Error)?.message ?? error}]`,
      };
    } finally {
      call.signal?.removeEventListener("abort", onAbort);
    }
  }
  if (outcome.cwd !== undefined) rt.session.cwd = outcome.cwd;
  const saidDone = await said.finish();
  const shownDone = shown ? await shown.finish() : undefined;
  const note = [outcome.note && rt.masker.maskText(outcome.note), extras.dropped]
    .filter(Boolean).join("\n") || undefined;
  const result: ToolResult = {
    name: call.name,
    said: appendNote(saidDone.texts[0], note, limits.saidBytes),
    shown: appendNote(shownDone ? shownDone.texts[0] : saidDone.texts[1], note, limits.shownBytes),
    is_error: outcome.isError,
    spill: saidDone.spill ?? shownDone?.spill ?? null,
    ...(extras.attachments.length ? { attachments: extras.attachments } : {}),
    ...(extras.structured ? { structured: extras.structured } : {}),
  };
  if (outcome.isError) {
    const code = outcome.code ?? (call.signal?.aborted ? "cancelled" : "tool_error");
    result.error = { code, message: errorMessage(note, saidDone.texts[0]) };
  }
  if (!hooked.refused) await afterTool(rt, call, result);
  return result;
}

interface Prepared {
  tool: NonNullable<ReturnType<Runtime["registry"]["get"]>>;
  args: Record<string, unknown>;
  cwd: string;
  timeoutMs: number;
}

/** What is wrong with a call before it runs: its code and one line. */
interface Unprepared {
  code: ErrorCode;
  note: string;
}

/** Finds the tool and checks the arguments; returns what is wrong as one line. */
function prepare(rt: Runtime, call: ToolCall): Prepared | Unprepared {
  const tool = rt.registry.get(call.name);
  if (!tool) {
    return {
      code: "not_found",
      note: `[magi: unknown tool "${call.name}"; \`magi tools\` lists the tools]`,
    };
  }
  const bad = (note: string): Unprepared => ({ code: "bad_arguments", note });
  let raw = call.args ?? {};
  if (typeof raw === "string") {
    if (raw.trim() === "") raw = {};
    else {
      try {
        raw = JSON.parse(raw);
      } catch (error) {
        return bad(
          `[magi: invalid arguments for "${call.name}": not JSON (${(error as Error).message})]`,
        );
      }
    }
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return bad(`[magi: invalid arguments for "${call.name}": expected a JSON object]`);
  }
  const args: Record<string, unknown> = { ...raw as Record<string, unknown> };
  let cwd = rt.session.cwd;
  let timeoutMs = Math.min(rt.timeoutSeconds * 1000, MAX_TIMEOUT_MS);
  // cwd and timeout_seconds are magi's, unless the tool declares the name itself.
  const own = (tool.declaration.parameters.properties ?? {}) as Record<string, unknown>;
  if ("cwd" in args && !("cwd" in own)) {
    if (typeof args.cwd !== "string") {
      return bad(`[magi: invalid arguments for "${call.name}": field "cwd" must be string]`);
    }
    cwd = isAbsolute(args.cwd) ? args.cwd : resolve(rt.session.cwd, args.cwd);
    delete args.cwd;
  }
  if ("timeout_seconds" in args && !("timeout_seconds" in own)) {
    const t = args.timeout_seconds;
    if (typeof t !== "number" || !(t > 0)) {
      return bad(
        `[magi: invalid arguments for "${call.name}": field "timeout_seconds" must be a number greater than 0]`,
      );
    }
    timeoutMs = Math.min(t * 1000, MAX_TIMEOUT_MS);
    delete args.timeout_seconds;
  }
  try {
    if (!Deno.statSync(cwd).isDirectory) return bad(`[magi: cwd "${cwd}" is not a directory]`);
  } catch {
    return bad(`[magi: cwd "${cwd}" does not exist]`);
  }
  const problem = argumentsProblem(tool.declaration.parameters, args);
  if (problem) return bad(`[magi: invalid arguments for "${call.name}": ${problem}]`);
  return { tool, args, cwd, timeoutMs };
}
