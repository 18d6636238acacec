/**
 * Hooks (config `hooks`): the person's programs run at four events — `before_tool`,
 * `after_tool`, `session_start`, `user_prompt` — each given the event as one JSON object on
 * stdin, in the shape Claude Code's hooks read:
 *
 * ```json
 * {"session_id": "…", "transcript_path": "…/transcript.jsonl", "cwd": "/work",
 *  "hook_event_name": "PreToolUse", "tool_name": "run", "tool_input": {"command": "rm -r x"}}
 * ```
 *
 * (`PostToolUse` adds `tool_response: {said, is_error}`; `UserPromptSubmit` has `prompt`;
 * `SessionStart` has `source`: "startup" or "resume".) A hook is `sh -c COMMAND` in its own
 * process group, in the session's working folder, with the environment a tool gets, inside the
 * OS sandbox (`hook_sandbox.ts`: workspace-write unless its entry says `"sandbox": false`);
 * past its time limit (default 60 s) the group is ended (bwrap and all inside it). Exit
 * status 2 blocks (a `before_tool` call, a prompt) with stderr as the reason; stdout
 * `{"decision": "allow"}` (or Claude Code's `hookSpecificOutput.permissionDecision`) approves a
 * call the policy would ask about — never one a rule denies. Any other failure, a time-out or
 * bad output costs only that hook: one stderr line, and the event goes on as if it had not run.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { childEnv } from "../../exec/env.ts";
import { stderrTail } from "../../exec/outcome.ts";
import { spawnProcess } from "../../exec/spawn.ts";
import { type LaterMissing, laterMissing, plantedSince } from "../../policy/later_missing.ts";
import { concatBytes } from "../../core/bytes.ts";
import type { Warn } from "../../core/types.ts";
import type { CallContext } from "../../exec/env.ts";
import type { Policy } from "../../policy/decide.ts";
import { hookLaunch } from "./hook_sandbox.ts";

/** What a hook's run reads of the session (a `Runtime` is one). */
export interface HookHost {
  session: { cwd: string };
  /** A tool call's environment base (no provider API keys): a hook's too. */
  toolEnv: Record<string, string>;
  context: Omit<CallContext, "MAGI_CWD">;
  linksDir: string | undefined;
  /** The session's policy: its sandbox settings (`sessionSettings`) and launcher. */
  policy: Policy;
}

/** The events, and Claude Code's name for each (`hook_event_name`). */
export const HOOK_EVENTS = {
  before_tool: "PreToolUse",
  after_tool: "PostToolUse",
  session_start: "SessionStart",
  user_prompt: "UserPromptSubmit",
} as const satisfies Record<HookEvent, string>;

/** An event's config name, and one configured hook (config `hooks`: lib/config/shapes.ts). */
export type { HookEvent, HookSpec } from "../../config/shapes.ts";
import type { HookEvent, HookSpec } from "../../config/shapes.ts";

/** What the hooks of one event said. */
export interface HookVerdict {
  /** Set when a hook blocked: its reason (stderr, or the JSON's reason). */
  blocked?: string;
  /** A hook approved the call (`before_tool`). */
  allow?: boolean;
}

/** Default time limit of a hook, in seconds. */
export const HOOK_TIMEOUT_SECONDS = 60;
/** The most stdout of a hook that is read, in bytes. */
const STDOUT_BYTES = 64 * 1024;

interface Loaded extends HookSpec {
  pattern?: RegExp;
  /** The files its line names that were missing when the session started. */
  missing?: LaterMissing;
}

/** The configured hooks, by event. */
export class Hooks {
  readonly #byEvent = new Map<HookEvent, Loaded[]>();
  readonly #warn: Warn;
  readonly #start: { cwd: string; home?: string } | undefined;

  /**
   * @param config the value of config `hooks` (checked against its schema already)
   * @param warn one line per hook that cannot load or that fails
   * @param start the session's start folder and HOME: a file a hook's line names that is
   *   missing now and there later is refused (`later_missing.ts`)
   */
  constructor(
    config: Readonly<Partial<Record<HookEvent, readonly HookSpec[]>>>,
    warn: Warn,
    start?: { cwd: string; home?: string },
  ) {
    this.#warn = warn;
    this.#start = start;
    for (const event of Object.keys(HOOK_EVENTS) as HookEvent[]) {
      const loaded: Loaded[] = [];
      for (const spec of config[event] ?? []) {
        let pattern: RegExp | undefined;
        if (spec.matcher !== undefined && spec.matcher !== "*") {
          try {
            pattern = new RegExp(`^(?:${spec.matcher})$`);
          } catch (error) {
            warn(
              `hook ${event} "${spec.command}": matcher is not a regular expression ` +
                `(${(error as Error).message}); skipped`,
            );
            continue;
          }
        }
        const missing = start
          ? laterMissing({ line: spec.command, cwd: start.cwd }, start.home)
          : undefined;
        loaded.push({ ...spec, pattern, missing });
      }
      if (loaded.length > 0) this.#byEvent.set(event, loaded);
    }
  }

  /** Whether any hook listens to `event`. */
  has(event: HookEvent): boolean {
    return this.#byEvent.has(event);
  }

  /**
   * Runs the hooks of `event` in order (for a tool event, those whose matcher takes `tool`);
   * the first that blocks ends the run.
   */
  async run(
    rt: HookHost,
    event: HookEvent,
    fields: Record<string, unknown>,
    tool?: string,
  ): Promise<HookVerdict> {
    const hooks = (this.#byEvent.get(event) ?? []).filter((h) =>
      !h.pattern || (tool !== undefined && h.pattern.test(tool))
    );
    const verdict: HookVerdict = {};
    for (const hook of hooks) {
      const said = await this.#runOne(rt, event, hook, fields);
      if (said.blocked !== undefined) return { blocked: said.blocked };
      if (said.allow) verdict.allow = true;
    }
    return verdict;
  }

  async #runOne(
    rt: HookHost,
    event: HookEvent,
    hook: Loaded,
    fields: Record<string, unknown>,
  ): Promise<HookVerdict> {
    const session = rt.context.MAGI_SESSION;
    const input = JSON.stringify({
      session_id: session ?? "",
      transcript_path: rt.context.MAGI_CONTEXT_PATH
        ? join(dirname(rt.context.MAGI_CONTEXT_PATH), "transcript.jsonl")
        : "",
      cwd: rt.session.cwd,
      hook_event_name: HOOK_EVENTS[event],
      ...fields,
    });
    // A file its line names that was missing at the start, there now: not run.
    if (hook.missing && this.#start) {
      const program = { line: hook.command, cwd: this.#start.cwd };
      const why = plantedSince(program, hook.missing, rt.session.cwd, this.#start.home);
      if (why) {
        this.#warn(`hook ${event} "${hook.command}" not run: ${why}; ignored`);
        return {};
      }
    }
    const timeoutMs = (hook.timeout_seconds ?? HOOK_TIMEOUT_SECONDS) * 1000;
    const chunks: Uint8Array[] = [];
    let size = 0;
    const where = `hook ${event} "${hook.command}"`;
    const launch = hookLaunch(rt.policy, hook);
    if ("refused" in launch) {
      this.#warn(`${where} ${launch.refused}; ignored`);
      return {};
    }
    let spawned;
    try {
      spawned = await spawnProcess({
        program: launch.program,
        args: launch.args,
        restart: launch.restart,
        cwd: rt.session.cwd,
        env: childEnv(rt.toolEnv, rt.linksDir, { ...rt.context, MAGI_CWD: rt.session.cwd }),
        stdin: input,
        timeoutMs,
        graceMs: 500,
        maxStdoutBytes: STDOUT_BYTES,
        onStdout: (chunk) => {
          chunks.push(chunk.slice());
          size += chunk.length;
        },
      });
    } finally {
      launch.release();
    }
    const reason = stderrTail(spawned.stderrTail, spawned.stderrCut).trim();
    if (spawned.startError) {
      this.#warn(`${where} could not start: ${spawned.startError}; ignored`);
      return {};
    }
    if (spawned.timedOut) {
      this.#warn(`${where} ran past its ${timeoutMs / 1000} s limit and was ended; ignored`);
      return {};
    }
    if (spawned.code === 2) return { blocked: reason || `${where} blocked it (exit status 2)` };
    if (spawned.code !== 0) {
      const why = spawned.signal ? `was killed by ${spawned.signal}` : `exited ${spawned.code}`;
      this.#warn(`${where} ${why}${reason ? `: ${reason.split("\n").at(-1)}` : ""}; ignored`);
      return {};
    }
    const out = new TextDecoder().decode(concatBytes(chunks, size)).trim();
    if (!out.startsWith("{")) return {};
    let json: Record<string, unknown>;
    try {
      json = JSON.parse(out);
    } catch {
      this.#warn(`${where} printed JSON that does not parse; ignored`);
      return {};
    }
    const specific = json.hookSpecificOutput as Record<string, unknown> | undefined;
    const decision = specific?.permissionDecision ?? json.decision;
    const why = String(specific?.permissionDecisionReason ?? json.reason ?? "");
    if (decision === "deny" || decision === "block") {
      return { blocked: why || `${where} blocked it` };
    }
    if (decision === "allow" || decision === "approve") return { allow: true };
    return {};
  }
}
