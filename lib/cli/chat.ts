/**
 * `magi chat`: an interactive session at a readline prompt. Each line is a request; the
 * model's answer (markdown rendered on a terminal) and the tool calls it makes are shown as
 * they happen, with a status line while it works (lib/terminal/status_line.ts). Questions —
 * a tool's and the policy's — are asked at the prompt in one style (`[y]es / [n]o /
 * [a]lways`, lib/terminal/choice.ts), the status line paused meanwhile. Lines starting with
 * `/` are slash commands (lib/terminal/slash.ts; Tab completes them). Ctrl-C cancels the
 * running answer or tool calls — ending their process groups — keeps what was said of the
 * answer in the session, marked interrupted, and returns to the prompt.
 *
 * @module
 */
import process from "node:process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { closeUnfinished, runAgent } from "../agent/loop.ts";
import { compactNow } from "../agent/compact.ts";
import { ProviderError } from "../agent/provider.ts";
import { chooseProvider, ProviderConfigError } from "../agent/providers.ts";
import { listSessions, Session } from "../agent/session.ts";
import type { AnswerProvider } from "../pipeline/ask.ts";
import type { Approver } from "../policy/gate.ts";
import { userConfigFile } from "../policy/decide.ts";
import { type AlwaysRun, coveredBySession, offerPrefixRule } from "./always_run.ts";
import { TerminalView } from "../terminal/view.ts";
import { stdout } from "../pipeline/out.ts";
import { createPrivateFile } from "../core/private.ts";
import { EXIT, parseCommand, UsageError } from "./common.ts";
import { maxTurnsOf, startFromFlags } from "./run.ts";
import { agentSettings } from "../agent/start.ts";
import { userPromptHook } from "../runtime/hooks/session_hooks.ts";
import { claimInterrupts } from "../exec/spawn.ts";
import { APPROVAL, approvalOf, choicesLine, normaliseAnswer } from "../terminal/choice.ts";
import { costReport, Tally } from "../terminal/cost.ts";
import { pages } from "../terminal/display_cap.ts";
import { loadRenderer, type Render } from "../terminal/markdown.ts";
import { applySlashSources, SlashTable } from "../terminal/slash.ts";
import { addMcpPrompt } from "../terminal/mcp_prompts.ts";
import { listMcpPrompts } from "../sources/mcp/client.ts";
import { CHAT_OPTIONS } from "./options.ts";
import { chatSampling } from "./mcp_sampling.ts";
import { setMcpSampling } from "../sources/mcp/sampling.ts";
import { recordInterrupted } from "./interrupted.ts";

/** Lines from stdin, one at a time, with a prompt when stdin is a terminal. */
class LineReader {
  readonly #rl;
  readonly #lines: string[] = [];
  #waiting: ((line: string | null) => void) | undefined;
  #closed = false;
  /** Called on Ctrl-C typed at the terminal. */
  onInterrupt: () => void = () => {};

  constructor(terminal: boolean, completer?: (line: string) => [string[], string]) {
    this.#rl = createInterface({
      input: process.stdin,
      output: process.stdout,
      terminal,
      ...(terminal && completer ? { completer } : {}),
    });
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

function columns(): number {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return 80;
  }
}

/** Runs `magi chat`. */
export async function chatCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, CHAT_OPTIONS);
  if (positionals.length > 0) {
    throw new UsageError(`magi chat takes no task; got ${JSON.stringify(positionals)}`);
  }
  const maxTurns = maxTurnsOf(values["max-turns"]);
  const started = await startFromFlags(values);
  if (typeof started === "number") return started;
  const { rt, agent } = started;
  let { session, provider } = agent;
  const terminal = Deno.stdin.isTerminal() && Deno.stdout.isTerminal();
  const fancy = terminal && !Deno.env.get("NO_COLOR");
  // The markdown renderer loads while the person types its first line.
  const rendering: Promise<Render | undefined> = fancy
    ? loadRenderer(Math.min(columns(), 100)).catch(() => undefined)
    : Promise.resolve(undefined);
  const out = (text: string) => stdout.text(text);
  const lines = rt.config.values["display.lines"];
  let kept = 0;
  const makeView = (render: Render | undefined) =>
    new TerminalView({
      json: false,
      out: stdout,
      info: stdout,
      fancy,
      progress: stdout,
      render,
      lines,
      onUsage: (u) => tally.add(u),
      keep: (name, shown) => {
        const path = join(session.dir, "shown", `${++kept}-${name}.txt`);
        createPrivateFile(path, rt.masker.maskText(shown));
        return path;
      },
    });
  let view = makeView(undefined);
  let rendered = false;
  view.follow(agent.http);
  const tally = new Tally();
  const verb = values.resume ? "resumed" : "new";
  out(
    `magi chat — ${provider.name}/${provider.model} — ${verb} session ${session.id}\n` +
      "/help lists the commands; Ctrl-C cancels a running answer or tool\n",
  );
  // Questions — a tool's (S3.6) and the policy's (S8.1) — are asked at the prompt one at a
  // time, the status line paused; end of input answers nothing.
  let asking: Promise<unknown> = Promise.resolve();
  const ask = (text: string, prompt: string): Promise<string | undefined> => {
    const next = asking.then(async () => {
      view.status?.pause();
      try {
        view.note(text);
        const line = await reader.read(prompt);
        return line === null ? undefined : line.trim();
      } finally {
        view.status?.resume();
      }
    });
    asking = next;
    return next;
  };
  const answer: AnswerProvider = async (question) => {
    const choices = question.choices?.length ? ` ${choicesLine(question.choices)}` : "";
    const line = await ask(`? ${question.question}${choices}`, "answer> ");
    return line === undefined ? undefined : normaliseAnswer(line, question.choices);
  };
  // An MCP server's sampling request: the person is asked, then the session's model answers.
  setMcpSampling(chatSampling(() => provider, answer));
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
      `? allow ${tool}: ${verdict.reason}? ${choicesLine(APPROVAL)}`,
      "allow> ",
    );
    if (line === undefined) return undefined;
    const choice = approvalOf(line);
    if (choice === "always") await offerPrefixRule(always, tool, args);
    return choice;
  };

  let controller: AbortController | undefined;
  const slash = new SlashTable();
  const sessionsDir = join(session.dir, "..");
  const switchTo = (next: Session, what: string) => {
    session.append({ type: "end", reason: what });
    session.close();
    session = next;
    rt.context = {
      ...rt.context,
      MAGI_SESSION: session.id,
      MAGI_CONTEXT_PATH: session.contextPath,
    };
    rt.spillDir = join(session.dir, "spill");
    tally.reset();
  };
  slash.add({ name: "help", help: "list these commands", run: () => out(slash.help()) });
  slash.add({
    name: "model",
    args: "[name]",
    help: "show the model, or switch to another of this provider",
    complete: () => {
      const p = rt.config.values.providers ?? {};
      return [...new Set(Object.values(p).flatMap((e) => e.model ? [e.model] : []))];
    },
    run: (name) => {
      if (name === "") return out(`model: ${provider.name}/${provider.model}\n`);
      try {
        const chosen = chooseProvider(
          rt.config.values,
          { provider: provider.name, model: name },
          rt.env,
        );
        provider = chosen.provider;
        agent.http = chosen.http;
        view.follow(agent.http);
        out(`model: ${provider.name}/${provider.model} from the next request on\n`);
      } catch (error) {
        if (!(error instanceof ProviderConfigError)) throw error;
        out(`magi: ${error.message}\n`);
      }
    },
  });
  slash.add({
    name: "compact",
    args: "[focus]",
    help: "summarise older turns to free the context window",
    run: async (focus) => {
      closeUnfinished(session);
      controller = new AbortController();
      try {
        const done = await compactNow({
          provider,
          session,
          system: agent.system,
          tools: rt.registry.declarations(),
          settings: agent.context,
          focus: focus || undefined,
          signal: controller.signal,
          note: (message) => view.note(message),
        });
        if (!done) view.note("(nothing to compact yet)");
      } finally {
        controller = undefined;
      }
    },
  });
  slash.add({
    name: "clear",
    help: "start a new session (the conversation so far stays in its own)",
    run: () => {
      const next = Session.create(sessionsDir, rt.masker, {
        cwd: rt.session.cwd,
        provider: provider.name,
        model: provider.model,
      });
      const old = session.id;
      switchTo(next, "clear");
      if (terminal) stdout.own("\x1b[2J\x1b[H");
      out(`new session ${session.id} (the last one: magi chat --resume ${old})\n`);
    },
  });
  slash.add({
    name: "sessions",
    help: "list the sessions",
    run: () => {
      const all = listSessions(sessionsDir).slice(-20);
      out(
        all.map((s) =>
          `${s.id === session.id ? "*" : " "} ${s.id}  ${s.provider}/${s.model}  ${s.title}`
        ).join("\n") + "\n",
      );
    },
  });
  slash.add({
    name: "resume",
    args: "ID",
    help: "go on with another session",
    complete: () => listSessions(sessionsDir).map((s) => s.id),
    run: (id) => {
      if (id === "") return out("magi: /resume needs a session id; /sessions lists them\n");
      try {
        const next = Session.open(sessionsDir, id, rt.masker, (m) => out(`magi: ${m}\n`));
        switchTo(next, "resume");
        closeUnfinished(session);
        out(`resumed session ${session.id} (${session.messages().length} messages)\n`);
      } catch (error) {
        out(`magi: ${(error as Error).message}\n`);
      }
    },
  });
  slash.add({
    name: "tools",
    help: "list the tools the model sees",
    run: () => {
      out(
        rt.registry.declarations().map((d) =>
          `  ${d.name.padEnd(20)} ${d.description.split("\n")[0].slice(0, 70)}`
        ).join("\n") + "\n",
      );
    },
  });
  slash.add({
    name: "cost",
    help: "tokens used in this session, and their price from config prices",
    run: () => out(costReport(tally, provider.model, rt.config.values.prices) + "\n"),
  });
  slash.add({
    name: "last",
    help: "show the whole of the last tool call's output, a page at a time",
    run: async () => {
      const last = view.lastShown;
      if (!last) return out("magi: no tool output yet\n");
      let rows = 24;
      try {
        rows = Deno.consoleSize().rows;
      } catch { /* not a terminal */ }
      const all = pages(last.shown, terminal ? Math.max(5, rows - 2) : Number.MAX_SAFE_INTEGER);
      for (const [i, page] of all.entries()) {
        out(page);
        if (i < all.length - 1) {
          const more = await reader.read(
            `-- ${i + 1}/${all.length}: Enter for more, q to stop -- `,
          );
          if (more === null || more.trim().toLowerCase().startsWith("q")) break;
        }
      }
    },
  });
  slash.add({ name: "exit", aliases: ["quit"], help: "leave the chat", run: () => "exit" });
  applySlashSources(slash);
  // The MCP servers' prompts join as /mcp__SERVER__NAME (as Claude Code names them), once
  // listed: a server still starting adds its prompts when it is ready for the listing.
  const promptsListed = listMcpPrompts().then((prompts) => {
    for (const p of prompts) addMcpPrompt(slash, p, out);
  }, () => {});

  const interrupt = () => {
    if (controller && !controller.signal.aborted) controller.abort();
    else if (terminal) out("\n(/exit or Ctrl-D to leave)\n");
  };
  const reader = new LineReader(terminal, (line) => slash.complete(line));
  reader.onInterrupt = interrupt;
  Deno.addSignalListener("SIGINT", interrupt);
  const releaseInterrupts = claimInterrupts();
  try {
    for (;;) {
      let line = await reader.read("> ");
      if (line === null) break;
      const text = line.trim();
      if (text === "") continue;
      if (SlashTable.isCommand(text)) {
        let done = await slash.run(text);
        // An MCP prompt typed before the servers' prompts were listed: wait for the listing.
        if ("unknown" in done && text.startsWith("/mcp__")) {
          await promptsListed;
          done = await slash.run(text);
        }
        if ("unknown" in done) out(done.unknown + "\n");
        else if (done.outcome === "exit") break;
        if (!("outcome" in done) || typeof done.outcome !== "object" || !done.outcome) continue;
        line = done.outcome.send;
      }
      if (fancy && !rendered) {
        rendered = true;
        const render = await rendering;
        if (render) {
          view = makeView(render);
          view.follow(agent.http);
        }
      }
      closeUnfinished(session);
      const held = await userPromptHook(rt, line);
      if (held) {
        view.note(held);
        continue;
      }
      session.append({ type: "user", text: line });
      controller = new AbortController();
      view.begin();
      try {
        const reason = await runAgent({
          rt,
          provider,
          session,
          ...agentSettings(agent),
          maxTurns,
          signal: controller.signal,
          view,
          answer,
          unanswered: "the person ended the input without answering",
          approve,
        });
        if (reason === "cancelled") {
          view.flush();
          recordInterrupted(session, view.takePartial());
          view.note("(interrupted)");
        }
        if (reason === "max_turns") view.note(`(stopped after --max-turns ${maxTurns})`);
      } catch (error) {
        if (!(error instanceof ProviderError)) throw error;
        view.flush();
        view.note(`magi: ${rt.masker.maskText(error.message)}`);
      } finally {
        view.done();
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
