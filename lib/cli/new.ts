/**
 * `magi new NAME --from PROGRAM [--tools-dir DIR] [--max-params N | --only A,B] [--dry-run]
 * [--generic] [--force]`: turns a program's `--help` into a typed tool in a tools folder (SPEC
 * S10.3), and says what it guessed and what it left to the generic `args` parameter. The
 * declaration is kept small (`budget.ts`): at most N typed parameters, within a byte budget.
 *
 * @module
 */
import { basename, resolve } from "node:path";
import { NEW_OPTIONS } from "./options.ts";
import { BUILTINS } from "../sources/builtins/mod.ts";
import { loadConfig, stringList } from "../config/load.ts";
import {
  captureHelp,
  type CaptureResult,
  errorInsteadOfHelp,
  findProgram,
  NEW_HELP_MAX_BYTES,
} from "../scaffold/capture.ts";
import {
  type BoundedSchema,
  boundedSchema,
  DECLARATION_BUDGET,
  DEFAULT_MAX_PARAMS,
} from "../scaffold/budget.ts";
import { genericReason } from "../scaffold/schema_gen.ts";
import { planTool, type ToolPlan, writePlan } from "../scaffold/scaffold.ts";
import { childEnv } from "../exec/env.ts";
import { defaultCachePath, DiscoveryCache } from "../sources/discovery_cache.ts";
import { TOOL_NAME } from "../registry/registry.ts";
import { discover } from "../sources/tools_dir.ts";
import { EXIT, parseCommand, UsageError, warn, write } from "./common.ts";

/** What `magi new` was asked to do. */
export interface NewRequest {
  name: string;
  /** The command line the tool runs: `["git", "status"]`. */
  words: string[];
  /** The tools folder to write into (absolute). */
  toolsDir: string;
  /** The folder is one of the config's `tools_dir` (else it came from `--tools-dir` only). */
  configured?: boolean;
  cwd: string;
  env: Record<string, string>;
  generic: boolean;
  force: boolean;
  dryRun: boolean;
  /** At most this many typed parameters (else `DEFAULT_MAX_PARAMS`, and the byte budget). */
  maxParams?: number;
  /** Type just these options, by any spelling (`-c`, `--create`, `create`). */
  only?: string[];
}

/** What `magi new` did. */
export interface NewResult {
  plan: ToolPlan;
  capture: CaptureResult;
  generated?: BoundedSchema;
  /** Lines of the report a person reads. */
  report: string[];
}

/** Runs `magi new`. */
export async function newCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseCommand(args, NEW_OPTIONS);
  const [name, ...more] = positionals;
  if (!name) throw new UsageError("magi new needs a tool NAME: magi new NAME --from PROGRAM");
  if (!values.from) {
    throw new UsageError(`magi new needs --from PROGRAM (the program "${name}" runs)`);
  }
  const words = [...values.from.trim().split(/\s+/), ...more].filter((w) => w !== "");
  const max = values["max-params"];
  if (max !== undefined && !/^\d+$/.test(max)) {
    throw new UsageError(`--max-params needs a whole number, not "${max}"`);
  }
  if (max !== undefined && values.only !== undefined) {
    throw new UsageError("give --max-params or --only, not both");
  }
  const cwd = Deno.cwd();
  const env = Deno.env.toObject();
  const result = await makeTool({
    name,
    words,
    ...toolsDirFor(values["tools-dir"], values.config, cwd, env),
    cwd,
    env,
    generic: values.generic ?? false,
    force: values.force ?? false,
    dryRun: values["dry-run"] ?? false,
    ...(max !== undefined ? { maxParams: Number(max) } : {}),
    ...(values.only !== undefined ? { only: onlyList(values.only) } : {}),
  }).catch((error) => {
    if (error instanceof UsageError) throw error;
    warn((error as Error).message);
    return undefined;
  });
  if (!result) return EXIT.toolError;
  await write(result.report.join("\n") + "\n");
  return EXIT.ok;
}

/**
 * The folder a new tool goes in: the first `--tools-dir`, else the first configured `tools_dir`;
 * and whether the config lists it.
 *
 * @throws UsageError when neither names one
 */
export function toolsDirFor(
  flag: string[] | undefined,
  configFlag: string | undefined,
  cwd: string,
  env: Record<string, string>,
): { toolsDir: string; configured: boolean } {
  const config = loadConfig({ cwd, env, configFlag });
  const configured = stringList(config.values.tools_dir).map((d) => resolve(cwd, d));
  const toolsDir = flag && flag.length > 0 ? resolve(cwd, flag[0]) : configured[0];
  if (toolsDir === undefined) {
    throw new UsageError(
      "magi new needs a tools folder: pass --tools-dir DIR or set tools_dir in the config",
    );
  }
  return { toolsDir, configured: configured.includes(toolsDir) };
}

/**
 * Captures the program's help, types it, plans the folder and (unless a dry run) writes it,
 * then checks that discovery accepts the tool.
 *
 * @throws UsageError for a bad name, a program that cannot be found, or one whose help is an
 *   error message (unless `generic`); Error when the tool exists and `force` is not set
 */
export async function makeTool(req: NewRequest): Promise<NewResult> {
  if (!TOOL_NAME.test(req.name)) {
    throw new UsageError(`tool name "${req.name}" must match ${TOOL_NAME.source}`);
  }
  if (req.words.length === 0) throw new UsageError("--from needs a program");
  const program = findProgram(req.words[0], req.cwd, req.env.PATH ?? "");
  if (!program) throw new UsageError(`cannot find the program "${req.words[0]}" on PATH`);
  // A script named by a relative path (`python3 ./x.py`) must still be found from a call's cwd.
  req = {
    ...req,
    words: [req.words[0], ...req.words.slice(1).map((w) => absoluteIfFile(w, req.cwd))],
  };
  const helpEnv = childEnv(req.env, undefined, { MAGI_CWD: req.cwd });
  const capture = await captureHelp(program, req.words, helpEnv, req.cwd);
  const failed = capture.best && errorInsteadOfHelp(capture.best);
  if (failed && !req.generic) {
    const shown = [req.words[0], ...capture.best!.args].join(" ");
    throw new UsageError(
      `"${shown}" failed (exit status ${capture.best!.code}) and printed no help, only: ${failed}` +
        ` — check --from, or pass --generic to make a generic tool anyway`,
    );
  }
  // With --generic, an error message is not the tool's description.
  const help = failed ? undefined : capture.best;
  const report: string[] = [];
  const line = (s: string) => report.push(s);
  const command = req.words.join(" ");
  for (const p of capture.problems) line(`note: ${p}`);
  if (BUILTINS.some((b) => b.name === req.name)) {
    line(
      `warning: the builtin "${req.name}" wins over a tools_dir tool of that name; pick another`,
    );
  }
  let generated: BoundedSchema | undefined;
  let why: string | undefined;
  if (req.generic) why = "--generic was given";
  else if (!help) why = "its help text could not be read";
  else why = genericReason(help.model);
  const planInput = { name: req.name, toolsDir: req.toolsDir, program, words: req.words, help };
  if (!why) {
    try {
      generated = boundedSchema(help!.model, {
        text: help!.text,
        words: req.words,
        maxParams: req.maxParams,
        only: req.only,
        ...(help!.featured ? { featured: help!.featured } : {}),
        ...(help!.usageText ? { usageText: help!.usageText } : {}),
        ...(help!.references ? { references: help!.references } : {}),
        budget: DECLARATION_BUDGET - nameAndDescriptionBytes(planTool(planInput)),
      });
    } catch (error) {
      if (error instanceof RangeError) throw new UsageError(error.message);
      throw error;
    }
  }
  const plan = planTool({ ...planInput, schema: generated?.schema });
  if (help) {
    line(
      `read the help of "${[req.words[0], ...help.args].join(" ")}" (${help.model.style} style` +
        `${help.fromStderr ? ", from stderr" : ""}, exit status ${help.code ?? "none"})`,
    );
    if (help.capped) {
      line(
        `note: the help text was cut at ${NEW_HELP_MAX_BYTES} bytes; later options are not typed`,
      );
    }
  }
  if (generated) {
    line(`typed parameters (${generated.guessed.length}), plus args and stdin:`);
    for (const g of generated.guessed) line(`  ${g}`);
    const left = leftLine(generated, help!.model.options.length, req);
    if (left) line(left);
  } else {
    line(`generic tool (parameters args and stdin): ${why}`);
  }
  const skipped = help?.model.skipped ?? [];
  if (generated && skipped.length > 0) {
    line(`not typed (reachable through args), or typed with a caveat:`);
    for (const s of skipped) line(`  ${s.what}: ${s.why}`);
  }
  line(`the tool's --help starts with:`);
  line(`  ${plan.summary}`);
  line(`  ${plan.usage}`);
  if (req.dryRun) {
    const exists = await Deno.lstat(plan.files[0].path).then(() => true, () => false);
    if (exists && !req.force) line(`note: "${plan.files[0].path}" exists: writing needs --force`);
    line(`dry run: nothing written; the files would be:`);
    for (const f of plan.files) {
      line(`--- ${f.path} (${f.kind})`);
      line(f.linkTo !== undefined ? `-> ${f.linkTo}` : (f.content ?? "").trimEnd());
    }
    return { plan, capture, generated, report };
  }
  await Deno.mkdir(req.toolsDir, { recursive: true });
  await writePlan(plan, req.name, req.force);
  line(
    `made tool "${req.name}" (${
      plan.via === "symlink" ? "a symlink to" : "a wrapper for"
    } ${command}):`,
  );
  for (const f of plan.files) line(`  ${f.path} (${f.kind})`);
  const problems = await discoveryProblems(req, plan.folder);
  const dirFlag = req.configured ? "" : ` --tools-dir ${req.toolsDir}`;
  if (problems.length === 0) {
    line(`discovery accepts it; try: magi check${dirFlag}, magi tools --json${dirFlag}`);
  }
  if (!req.configured) {
    line(
      `note: ${req.toolsDir} is not a configured tools_dir: add it to the config to keep the tool`,
    );
  } else for (const p of problems) line(`warning: ${p}`);
  return { plan, capture, generated, report };
}

/**
 * Bytes the declaration takes besides its parameters: its name, and the description discovery
 * will read from the tool's `--help` (the summary and usage lines the plan gives).
 */
function nameAndDescriptionBytes(plan: ToolPlan): number {
  const name = basename(plan.folder);
  const description = `${plan.summary}\n${plan.usage}`;
  return new TextEncoder().encode(JSON.stringify({ name, description, parameters: {} })).length;
}

/** The one report line on what bounding left out, and how to get it; undefined if nothing. */
function leftLine(g: BoundedSchema, options: number, req: NewRequest): string | undefined {
  const size = `${g.bytes} bytes of parameters`;
  const over = g.bytes > g.budget
    ? `, over the ${g.budget}-byte budget: the model reads them every turn`
    : "";
  if (req.only !== undefined || req.maxParams !== undefined) {
    if (g.left.length === 0 && over === "") return undefined;
    const asked = req.only !== undefined ? "--only" : `--max-params ${req.maxParams}`;
    return `typed what ${asked} asked (${size}${over})` +
      (g.left.length > 0 ? `; the other ${g.left.length} options go in args` : "");
  }
  if (g.left.length === 0 && g.shortened === undefined) return undefined;
  const cut = g.shortened !== undefined
    ? `descriptions cut to ${g.shortened} characters`
    : undefined;
  if (g.left.length === 0) return `note: ${cut} to keep the declaration small (${size})`;
  const names = g.left.slice(0, 4).map((o) => o.flag).join(", ");
  return `left out ${g.left.length} of ${options} options (${names}, …) to keep the declaration ` +
    `small (${size}${cut ? `; ${cut}` : ""}${over}): the model passes them in args; ` +
    `type more with --max-params N (now ${DEFAULT_MAX_PARAMS}) or name them with --only a,b,c`;
}

function absoluteIfFile(word: string, cwd: string): string {
  if (!word.includes("/") || word.startsWith("-")) return word;
  const path = resolve(cwd, word);
  try {
    return Deno.statSync(path).isFile ? path : word;
  } catch {
    return word;
  }
}

/** Runs discovery on the tools folder and keeps what it says about the new tool. */
async function discoveryProblems(req: NewRequest, folder: string): Promise<string[]> {
  const said: string[] = [];
  const found = await discover({
    dirs: [req.toolsDir],
    env: childEnv(req.env, undefined, { MAGI_CWD: req.cwd }),
    cache: new DiscoveryCache(defaultCachePath(req.env)),
    warn: (m) => said.push(m),
  });
  const mine = said.filter((m) => m.includes(`"${req.name}"`));
  if (!found.some((f) => f.folder === folder) && mine.length === 0) {
    mine.push(`discovery did not find "${req.name}" in ${req.toolsDir}`);
  }
  return mine;
}

/** The options `--only` names (comma-separated, repeatable); none at all is a usage error. */
function onlyList(given: string[]): string[] {
  const names = given.flatMap((o) => o.split(",")).map((o) => o.trim()).filter((o) => o !== "");
  if (names.length === 0) {
    throw new UsageError("--only needs option names, such as --only c,x,file");
  }
  return names;
}
