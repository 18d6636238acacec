/**
 * The `agent` builtin (start a sub-agent on a task, optionally with a named profile, and get
 * back its summary), the `mail` builtin (a sub-agent leaves its parent a message in the
 * mailbox, read at the parent's next turn), and {@link installAgentTools}, which puts them into
 * a runtime's registry and points its inbox at the mailbox.
 *
 * @module
 */
import { NONE } from "../../policy/effects.ts";
import type { Declaration, Outcome, Tool } from "../../core/types.ts";
import type { Runtime } from "../../runtime/runtime.ts";
import { Registry } from "../../registry/registry.ts";
import { type AgentHost, MAGI_AGENT_TOOLS, maxDepth } from "./host.ts";
import { deliverMail, hostMailDir, openInbox, sendMail } from "./mailbox.ts";
import { findProfile, listProfiles, type Profile } from "./profiles.ts";
import { runChild } from "./run_child.ts";

function fail(message: string): Outcome {
  return { isError: true, note: `[magi: ${message}]` };
}

/** Cuts text to `max` bytes at a character boundary; says so when it cut. */
function bounded(text: string, max: number, session: string): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= max) return text;
  let end = max;
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end)) +
    `\n[magi: the summary was cut at ${end} of ${bytes.length} bytes; session ${session} ` +
    "holds the whole]";
}

/** What the model is shown for `agent`, naming the profiles it may choose. */
export function agentDeclaration(profiles: readonly Profile[]): Declaration {
  const named = profiles.map((p) => `${p.name} (${p.description.replace(/\s+/g, " ")})`);
  return {
    ...AGENT_DECLARATION,
    parameters: {
      ...AGENT_DECLARATION.parameters,
      properties: {
        task: (AGENT_DECLARATION.parameters.properties as Record<string, unknown>).task,
        profile: {
          type: "string",
          description: named.length
            ? `A named profile: ${named.join("; ")}`
            : "A named profile from .magi/agents/ or ~/.config/magi/agents/ (none now)",
        },
      },
    },
  };
}

const AGENT_DECLARATION: Declaration = {
  name: "agent",
  description:
    "Start a sub-agent on a task; it works with its own session and a subset of your tools " +
    "and returns a short summary. Several calls in one answer run in parallel.\n" +
    "agent <task> [--profile NAME]",
  parameters: {
    type: "object",
    properties: {
      task: { type: "string", description: "What the sub-agent is to do, self-contained" },
      profile: {
        type: "string",
        description: "A named profile from .magi/agents/ or ~/.config/magi/agents/",
      },
    },
    required: ["task"],
    additionalProperties: false,
  },
};

/** The `agent` tool of the agent `host` describes, in runtime `rt`. */
export function agentTool(rt: Runtime, host: AgentHost): Tool {
  return {
    declaration: agentDeclaration(listProfiles(rt.session.cwd, rt.env, rt.warn)),
    origin: { source: "builtin", where: "magi:agent" },
    // The sub-agent's own calls pass the door one by one.
    effects: () => NONE,
    invoke: async (inv) => {
      let profile: Profile | undefined;
      if (typeof inv.args.profile === "string" && inv.args.profile !== "") {
        try {
          profile = findProfile(inv.args.profile, rt.session.cwd, rt.env);
        } catch (error) {
          return fail((error as Error).message);
        }
      }
      const done = await runChild(rt, host, {
        task: String(inv.args.task),
        profile,
        signal: inv.signal,
      }, installAgentTools);
      if (typeof done === "string") return fail(done);
      const max = rt.config.values["agents.summary_bytes"];
      const summary = bounded(done.answer.trim() || "(no answer)", max, done.session);
      const how = done.reason === "done" ? "finished" : `ended: ${done.reason}`;
      const note = `[magi: sub-agent session ${done.session} ${how}; ${done.calls.length} tool ` +
        `calls; ${done.usage.input_tokens} input and ${done.usage.output_tokens} output tokens]`;
      await inv.emit.said(summary + "\n");
      const calls = done.calls.length ? ` (${[...new Set(done.calls)].join(", ")})` : "";
      await inv.emit.shown(
        `sub-agent ${done.session}${profile ? ` [${profile.name}]` : ""}: ` +
          `${done.calls.length} tool calls${calls}\n${summary}\n`,
      );
      return {
        isError: done.reason !== "done",
        note,
      };
    },
  };
}

/** The `mail` tool of a sub-agent: a message to its parent. */
export function mailTool(host: AgentHost): Tool {
  return {
    declaration: {
      name: "mail",
      description: "Leave your parent agent a message; it reads it at its next turn.\n" +
        "mail <text>",
      parameters: {
        type: "object",
        properties: { text: { type: "string", minLength: 1 } },
        required: ["text"],
        additionalProperties: false,
      },
    },
    origin: { source: "builtin", where: "magi:mail" },
    effects: () => NONE,
    invoke: async (inv) => {
      try {
        // Into the host-only mailbox: the shared one is writable from inside the sandbox.
        sendMail(hostMailDir(host.mailDir), host.session.id, host.parent!, String(inv.args.text));
      } catch (error) {
        return fail(`Cannot send mail: ${(error as Error).message}`);
      }
      await inv.emit.said(`sent to ${host.parent}\n`);
      return { isError: false };
    },
  };
}

/**
 * Adds the agent tools to `rt`'s registry — `agent` while `host.depth < agents.max_depth`
 * (and `allowed` lets it), `mail` for a sub-agent — and sets `rt.inbox` to the host's mail.
 *
 * @param allowed the tool names a profile allows (undefined: all)
 */
export function installAgentTools(rt: Runtime, host: AgentHost, allowed?: Set<string>): void {
  const extra = [];
  if (host.depth < maxDepth(rt) && (!allowed || allowed.has("agent"))) {
    extra.push(agentTool(rt, host));
  }
  if (host.parent) extra.push(mailTool(host));
  // Another agent's `agent` and `mail` (a parent's, in a child's subset) are replaced.
  const kept = rt.registry.list().filter((t) => !MAGI_AGENT_TOOLS.has(t.origin.where));
  rt.registry = new Registry([...kept, ...extra], rt.warn);
  openInbox(host.mailDir, host.session.id);
  // One turn's mail is bound as one tool result is: a flood waits for later turns.
  rt.inbox = () =>
    deliverMail(host.mailDir, host.session.id, rt.warn, rt.config.values["limits.said_bytes"]);
}
