/**
 * `magi chat`: an interactive session at a readline prompt. Each line is a request; the
 * model's answer and the tool calls it makes are shown as they happen. A tool's question,
 * and the policy's question whether a call may run, are asked at the prompt. `/exit` (or end of input) leaves; Ctrl-C cancels the running model
 * response or tool calls — ending their process groups — and returns to the prompt, not out
 * of the session.
 *
 * @module
 */
import process from "node:process";
import { createInterface } from "node:readline";
import { closeUnfinished, runAgent } from "../agent/loop.ts";
import { compactNow } from "../agent/compact.ts";
import { ProviderError } from "../agent/provider.ts";
import type { AnswerProvider } from "../pipeline/ask.ts";
import type { Approver } from "../policy/gate.ts";
import { userConfigFile } from "../policy/decide.ts";
import { type AlwaysRun, coveredBySession, offerPrefixRule } from "./always_run.ts";
import { TerminalView } from "../agent/view.ts";
import { stdout } from "../output/out.ts";
import { EXIT, parseCommand, UsageError } from "./common.ts";
import { maxTurnsOf, startFromFlags } from "./run.ts";
import { userPromptHook } from "../hooks/session_hooks.ts";
import { claimInterrupts } from "../process/spawn.ts";

/** Lines from stdin, one at a time, with a prompt when stdin is a terminal. */
class LineReader {
  readonly #rl;
  readonly #lines: string[] = [];
  #waiting: ((line: string | null) => void) | undefined;
  #closed = false;
  /** Called on Ctrl-C typed at the terminal. */
  onInterrupt: () => void = () => {};

  constructor(terminal: boolean) {
    this.#rl = createInterface({ input: process.stdin, output: process.stdout, terminal });
    this.#rl.on("line", (line: string) => {
      if (this.#waiting) {
        const resolve = this.#waiting;
        this.#waiting = undefined;
        resolve(line);
      } else this.#lines.push(line);
    });
    this.#rl.on("close", () => {
      this.#closed = true;
      this.#waiting?.(null);
      this.#waiting = undefined;
    });
    this.#rl.on("SIGINT", () => this.onInterrupt());
  }

  /** The next line, or null at the end of input. */
  read(prompt: string): Promise<string | null> {
    if (this.#lines.length > 0) return Promise.resolve(this.#lines.shift()!);
    if (this.#closed) return Promise.resolve(null);
    this.#rl.setPrompt(prompt);
    this.#rl.prompt();
    return new Promise((resolve) => this.#waiting = resolve);
  }

  close(): void {
    this.#rl.close();
  }
}

/** Runs `magi chat`. */
export async function chatCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, {
    provider: { type: "string" },
    model: { type: "string" },
    resume: { type: "string" },
    "max-turns": { type: "string" },
    sandbox: { type: "string" },
  });
  if (positionals.length > 0) {
    throw new UsageError(`magi chat takes no task; got ${JSON.stringify(positionals)}`);
  }
  const maxTurns = maxTurnsOf(values["max-turns"]);
  const started = await startFromFlags(values);
  if (typeof started === "number") return started;
  const { rt, agent } = started;
  const { session, provider } = agent;
  const terminal = Deno.stdin.isTerminal() && Deno.stdout.isTerminal();
  const out = (text: string) => stdout.text(text);
  const view = new TerminalView({
    json: false,
    out: stdout,
    info: stdout,
    fancy: terminal && !Deno.env.get("NO_COLOR"),
    progress: stdout,
  });
  const verb = values.resume ? "resumed" : "new";
  out(
    `magi chat — ${provider.name}/${provider.model} — ${verb} session ${session.id}\n` +
      "/exit to leave; Ctrl-C cancels a running answer or tool\n",
  );
  // Questions — a tool's (S3.6) and the policy's (S8.1) — are asked at the prompt one at a
  // time; end of input answers nothing.
  let asking: Promise<unknown> = Promise.resolve();
  const ask = (text: string, prompt: string): Promise<string | undefined> => {
    const next = asking.then(async () => {
      view.note(text);
      const line = await reader.read(prompt);
      return line === null ? undefined : line.trim();
    });
    asking = next;
    return next;
  };
  const answer: AnswerProvider = (question) => {
    const choices = question.choices?.length ? ` [${question.choices.join(" / ")}]` : "";
    return ask(`? ${question.question}${choices}`, "answer> ");
  };
  // "always" for a `run` line offers its prefix rule (`npm test *`) for the session, and to
  // save it to the user's config.
  const always: AlwaysRun = {
    ask,
    note: (text) => view.note(text),
    configFile: userConfigFile(rt.env),
    prefixes: [],
    policy: rt.policy,
    cwd: () => rt.session.cwd,
    path: rt.env.PATH,
  };
  const approve: Approver = async ({ tool, verdict, args }) => {
    if (coveredBySession(always, tool, args)) {
      view.note(`(allowed: a prefix rule accepted in this session covers it)`);
      return "yes";
    }
    const line = await ask(
      `? allow ${tool}: ${verdict.reason}? [y]es / [n]o / [a]lways`,
      "allow> ",
    );
    if (line === undefined) return undefined;
    const word = line.toLowerCase();
    if (word === "a" || word === "always") {
      await offerPrefixRule(always, tool, args);
      return "always";
    }
    return word === "y" || word === "yes" ? "yes" : "no";
  };
  let controller: AbortController | undefined;
  const interrupt = () => {
    if (controller && !controller.signal.aborted) controller.abort();
    else if (terminal) out("\n(/exit or Ctrl-D to leave)\n");
  };
  const reader = new LineReader(terminal);
  reader.onInterrupt = interrupt;
  Deno.addSignalListener("SIGINT", interrupt);
  const releaseInterrupts = claimInterrupts();
  try {
    for (;;) {
      const line = await reader.read("> ");
      if (line === null) break;
      const text = line.trim();
      if (text === "") continue;
      if (text === "/exit" || text === "/quit") break;
      if (text === "/compact" || text.startsWith("/compact ")) {
        closeUnfinished(session);
        controller = new AbortController();
        try {
          const done = await compactNow({
            provider,
            session,
            system: agent.system,
            tools: rt.registry.declarations(),
            settings: agent.context,
            focus: text.slice("/compact".length).trim() || undefined,
            signal: controller.signal,
            note: (message) => view.note(message),
          });
          if (!done) view.note("(nothing to compact yet)");
        } finally {
          controller = undefined;
        }
        continue;
      }
      closeUnfinished(session);
      const held = await userPromptHook(rt, line);
      if (held) {
        view.note(held);
        continue;
      }
      session.append({ type: "user", text: line });
      controller = new AbortController();
      try {
        const reason = await runAgent({
          rt,
          provider,
          session,
          system: agent.system,
          maxTurns,
          maxRetries: agent.maxRetries,
          maxTokens: agent.maxTokens,
          context: agent.context,
          signal: controller.signal,
          view,
          answer,
          unanswered: "the person ended the input without answering",
          approve,
        });
        if (reason === "cancelled") view.note("(cancelled)");
        if (reason === "max_turns") view.note(`(stopped after --max-turns ${maxTurns})`);
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        view.note(`magi: ${rt.masker.maskText(error.message)}`);
      } finally {
        controller = undefined;
      }
    }
  } finally {
    Deno.removeSignalListener("SIGINT", interrupt);
    releaseInterrupts();
    reader.close();
    view.close();
    session.append({ type: "end", reason: "exit" });
    session.close();
  }
  out(`session ${session.id} (magi chat --resume ${session.id})\n`);
  return EXIT.ok;
}
