/**
 * The `skill` builtin: loads a skill on demand (its `SKILL.md` body and the list of its
 * files), reads one of its files, or runs one of its `scripts/`. A script passes the door as
 * the `run` of the same command line would (`gateCommand`: rules, asking, the sandbox); a
 * project's skill is asked about like a project's tool.
 *
 * @module
 */
import { join, relative } from "node:path";
import { containedPath } from "./contained.ts";
import { gateCommand } from "../../policy/gate.ts";
import { launchPath, type Policy, resolveProgram } from "../../policy/decide.ts";
import { NONE } from "../../policy/effects.ts";
import { systemLookups } from "../../policy/fs_facts.ts";
import { shellWord } from "../../policy/shell.ts";
import { processOutcome } from "../../exec/outcome.ts";
import { spawnProcess } from "../../exec/spawn.ts";
import type { Invocation, Outcome, Tool } from "../../core/types.ts";
import { MAX_LISTED_FILES, type Skill, skillBody, skillFiles, skillRoot } from "./discover.ts";

/** The most bytes of a skill file `skill` returns with `file` (the pipeline bounds it again). */
const FILE_BYTES = 256 * 1024;

/** Interpreters by file extension, for scripts that are not executable themselves. */
const INTERPRETERS: Record<string, string> = {
  ".py": "python3",
  ".sh": "bash",
  ".bash": "bash",
  ".js": "node",
  ".mjs": "node",
  ".rb": "ruby",
  ".pl": "perl",
};

/** The `skill` tool over these skills; `policy` is read at each call. */
export function skillTool(skills: readonly Skill[], policy: () => Policy): Tool {
  const byName = new Map(skills.map((s) => [s.name, s]));
  return {
    declaration: {
      name: "skill",
      description:
        "Load a skill from the system prompt's list: its instructions and files; or read one of " +
        "its files (`file`), or run one of its scripts (`script`, `args`).\n" +
        "skill <name> [--file PATH | --script PATH [ARGS…]]",
      parameters: {
        type: "object",
        properties: {
          name: { type: "string", enum: skills.map((s) => s.name) },
          file: { type: "string", description: "A file of the skill, relative to its folder" },
          script: {
            type: "string",
            description: "A script under the skill's scripts/ folder, relative to the skill",
          },
          args: { type: "array", items: { type: "string" }, description: "The script's arguments" },
        },
        required: ["name"],
        additionalProperties: false,
      },
    },
    origin: { source: "builtin", where: "magi:skill" },
    // A script's program passes the door when it starts (`gateCommand`).
    effects: (args) => typeof args.script === "string" ? { ...NONE, execsAtRun: true } : NONE,
    invoke: async (inv) => {
      const skill = byName.get(String(inv.args.name));
      if (!skill) return fail(`no skill "${inv.args.name}"`);
      if (typeof inv.args.script === "string") return await runScript(policy(), skill, inv);
      if (typeof inv.args.file === "string") return await readFile(skill, inv.args.file, inv);
      if (!skillRoot(skill)) {
        return fail(`the folder of skill "${skill.name}" changed since it was found; not read`);
      }
      const body = skillBody(skill);
      const { files, more } = skillFiles(skill);
      const list = files.map((f) => `- ${f}`).join("\n") +
        (more ? `\n- … (only the first ${MAX_LISTED_FILES} are listed)` : "");
      await inv.emit.said(
        `# skill ${skill.name} (${skill.dir})\n\n${body.trimEnd()}\n\n## files\n\n${list}\n`,
      );
      return { isError: false };
    },
  };
}

function lstatOrUndefined(path: string): Deno.FileInfo | undefined {
  try {
    return Deno.lstatSync(path);
  } catch {
    return undefined;
  }
}

function fail(message: string): Outcome {
  return { isError: true, note: `[magi: ${message}]` };
}

/** The real path of `rel` inside `base`, or undefined when it leaves `base`. */
function inside(base: string, rel: string): string | undefined {
  return containedPath(join(base, rel), base);
}

async function readFile(skill: Skill, rel: string, inv: Invocation): Promise<Outcome> {
  const root = skillRoot(skill);
  const real = root && inside(root, rel);
  const looked = real ? lstatOrUndefined(real) : undefined;
  if (!real || !looked?.isFile) {
    return fail(`Cannot read "${rel}" of skill "${skill.name}": no such file in its folder`);
  }
  const file = await Deno.open(real);
  try {
    // The file opened must be the one looked at (a link swapped in between is not followed).
    const opened = await file.stat();
    if (opened.ino !== looked.ino || opened.dev !== looked.dev || !skillRoot(skill)) {
      return fail(`Cannot read "${rel}" of skill "${skill.name}": it changed while being read`);
    }
    const buf = new Uint8Array(FILE_BYTES);
    let at = 0;
    while (at < buf.length) {
      const n = await file.read(buf.subarray(at));
      if (n === null) break;
      at += n;
    }
    await inv.emit.said(buf.subarray(0, at));
  } finally {
    file.close();
  }
  return { isError: false };
}

async function runScript(policy: Policy, skill: Skill, inv: Invocation): Promise<Outcome> {
  const rel = String(inv.args.script);
  const root = skillRoot(skill);
  const real = root &&
    (inside(join(root, "scripts"), relative("scripts", rel)) ?? inside(join(root, "scripts"), rel));
  if (!real || !Deno.statSync(real).isFile) {
    return fail(
      `Cannot run "${rel}" of skill "${skill.name}": no such file in its scripts/ folder`,
    );
  }
  const args = Array.isArray(inv.args.args) ? inv.args.args.map(String) : [];
  const ext = /\.[a-z]+$/.exec(real)?.[0] ?? "";
  const executable = ((Deno.statSync(real).mode ?? 0) & 0o111) !== 0;
  const argv = INTERPRETERS[ext] && !executable
    ? [INTERPRETERS[ext], real, ...args]
    : executable
    ? [real, ...args]
    : ["sh", real, ...args];
  const line = argv.map(shellWord).join(" ");
  const gated = await gateCommand(policy, inv, argv, line, inv.cwd, "skill", {
    project: skill.project,
  });
  if ("refused" in gated) {
    const whose = skill.project ? " (a project's skill: its scripts are asked about)" : "";
    return fail(`${line}: ${gated.refused}${whose}`);
  }
  const path = inv.env.PATH ?? policy.env.PATH ?? "";
  const look = systemLookups(policy);
  const found = resolveProgram(look, argv[0], inv.cwd, path);
  if (!found) return fail(`Cannot start "${argv[0]}": no such program`);
  const program = launchPath(look, argv[0], found);
  const command = gated.wrap?.(program, argv.slice(1)) ?? { program, args: argv.slice(1) };
  const spawned = await spawnProcess({
    program: command.program,
    args: command.args,
    restart: command.restart,
    cwd: inv.cwd,
    env: { ...inv.env, ...command.env, MAGI_SKILL_DIR: skill.dir },
    timeoutMs: inv.timeoutMs,
    signal: inv.signal,
    onStdout: (chunk) => inv.emit.said(chunk),
    onStderr: (chunk) => inv.emit.said(chunk),
  });
  return processOutcome(spawned, inv.timeoutMs);
}
