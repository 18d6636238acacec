/**
 * Laying out a tool made by `magi new` (SPEC S4.1, S10.3): `tools_dir/NAME/NAME` (a symlink to
 * the program, or a small wrapper script), `schema.json` when the help could be typed, and a
 * `selftest.sh` that checks the `--help` contract and makes one harmless call.
 *
 * @module
 */
import { basename, join } from "node:path";
import { contractLines } from "../sources/help.ts";
import type { JsonSchema } from "../core/types.ts";
import type { CapturedHelp } from "./capture.ts";

/** One file of the tool's folder. */
export interface PlannedFile {
  path: string;
  /** The text to write; absent for a symlink. */
  content?: string;
  /** The symlink's target, for a link. */
  linkTo?: string;
  /** Mode bits, such as 0o755 for scripts. */
  mode?: number;
  /** What it is, for the report: "wrapper script", "symlink", "schema", "selftest". */
  kind: string;
}

/** The tool's folder and files. */
export interface ToolPlan {
  folder: string;
  files: PlannedFile[];
  /** The summary and usage lines the tool's `--help` starts with. */
  summary: string;
  usage: string;
  /** How the tool reaches the program: "symlink" or "wrapper". */
  via: "symlink" | "wrapper";
}

/** What planning needs. */
export interface PlanInput {
  name: string;
  toolsDir: string;
  /** The program's absolute path. */
  program: string;
  /** The command line as given: `["git", "status"]`. */
  words: string[];
  /** The help text chosen, if any printed one. */
  help?: CapturedHelp;
  /** The schema, absent for a generic tool. */
  schema?: JsonSchema;
}

/** Quotes a word for sh: `it's` → `'it'\''s'`. */
export function shQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Plans the tool's files (nothing is written). */
export function planTool(input: PlanInput): ToolPlan {
  const { name, help } = input;
  const folder = join(input.toolsDir, name);
  const sub = input.words.slice(1);
  const model = help?.model;
  const summary = oneLine(model?.summary ?? `Runs ${input.words.join(" ")}`) +
    (model?.summary
      ? ""
      : help
      ? " (its help text gives no summary)"
      : " (its help text could not be read)");
  const usageRest = model?.usage ? usageAfter(model.usage, input.words) : "[ARGS...]";
  const usage = `Usage: ${name} ${usageRest}`.trim();
  const via = canLink(input) ? "symlink" : "wrapper";
  // A symlink's --help is the program's own: report the lines discovery will read.
  const own = via === "symlink" ? contractLines(help!.text) : null;
  const bin = join(folder, name);
  const files: PlannedFile[] = [];
  if (via === "symlink") files.push({ path: bin, linkTo: input.program, kind: "symlink" });
  else {
    files.push({
      path: bin,
      content: wrapperScript(input, summary, usage),
      mode: 0o755,
      kind: `wrapper script for ${input.words.join(" ")}`,
    });
  }
  if (input.schema) {
    files.push({
      path: join(folder, "schema.json"),
      content: JSON.stringify(input.schema, null, 2) + "\n",
      kind: "schema",
    });
  }
  files.push({
    path: join(folder, "selftest.sh"),
    content: selftestScript(input, via, sub),
    mode: 0o755,
    kind: "selftest",
  });
  if (own?.usage !== undefined) {
    return { folder, files, summary: own.summary, usage: own.usage, via };
  }
  return { folder, files, summary, usage, via };
}

/**
 * Writes a plan. A tool whose files already exist is replaced only with `force`: the planned
 * files (and a schema.json the plan no longer has) are removed first; other files are left.
 *
 * @throws Error `Tool "NAME" already exists in "DIR"` without force, or a file system error
 */
export async function writePlan(plan: ToolPlan, name: string, force: boolean): Promise<void> {
  const taken = [...new Set([...plan.files.map((f) => f.path), join(plan.folder, "schema.json")])];
  const existing = (await Promise.all(taken.map((p) => Deno.lstat(p).then(() => p, () => null))))
    .filter((p) => p !== null);
  if (existing.length > 0 && !force) {
    throw new Error(
      `Tool "${name}" already exists in "${plan.folder}" (${
        existing.map((p) => basename(p!)).join(", ")
      }); pass --force to replace it`,
    );
  }
  await Deno.mkdir(plan.folder, { recursive: true });
  for (const file of plan.files) {
    await Deno.remove(file.path).catch(() => {});
    if (file.linkTo !== undefined) {
      await Deno.symlink(file.linkTo, file.path);
    } else {
      await Deno.writeTextFile(file.path, file.content ?? "");
      if (file.mode !== undefined) await Deno.chmod(file.path, file.mode);
    }
  }
  if (!plan.files.some((f) => f.kind === "schema")) {
    await Deno.remove(join(plan.folder, "schema.json")).catch(() => {});
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** The usage form after the program's name and the subcommand words. */
function usageAfter(usage: string, words: string[]): string {
  const parts = usage.split(" ");
  parts.shift();
  for (const w of words.slice(1)) {
    if (parts[0] === w) parts.shift();
  }
  return parts.join(" ");
}

/**
 * Whether the tool can be a plain symlink: no subcommand to fix, the same name (some programs
 * act on the name they are called by), and a `--help` whose first two lines already keep the
 * contract: a whole summary (not the first line of a longer paragraph, as tar's is) and a usage
 * line naming the program by that name (GNU `ls` prints the path it was started by, which under
 * discovery is the tool's own path).
 */
function canLink(input: PlanInput): boolean {
  const h = input.help;
  if (!h || input.words.length !== 1 || basename(input.program) !== input.name) return false;
  if (h.args.join(" ") !== "--help" || h.code !== 0 || h.fromStderr) return false;
  const lines = contractLines(h.text);
  if (!lines?.usage) return false;
  const { summary, usage } = lines;
  const bad = (l: string) => /^(or\s*:|-|\[)/i.test(l) || /:$/.test(l);
  if (!/^usage\s*:/i.test(usage) || /^usage\s*:/i.test(summary) || bad(summary)) return false;
  if (usage.replace(/^usage\s*:\s*/i, "").split(/\s+/)[0] !== input.name) return false;
  const whole = h.model.summary;
  const line = summary.replace(/\s+/g, " ").replace(/\.$/, "");
  return !(whole !== undefined && whole.length > line.length && whole.startsWith(line));
}

function wrapperScript(input: PlanInput, summary: string, usage: string): string {
  const command = [input.program, ...input.words.slice(1)].map(shQuote).join(" ");
  const help = input.help;
  const rerun = help && !help.capped
    ? `  ${[input.program, ...help.args].map(shQuote).join(" ")} 2>&1\n`
    : "";
  return `#!/bin/sh
# ${summary}
# ${usage}
# Made by \`magi new ${input.name} --from '${input.words.join(" ")}'\`: runs the program with the
# call's arguments. Its --help prints the two lines above, then the program's own help.
if [ "$#" -eq 1 ] && [ "$1" = "--help" ]; then
  printf '%s\\n' ${shQuote(summary)} ${shQuote(usage)} ''
${rerun}  exit 0
fi
exec ${command} "$@"
`;
}

function selftestScript(input: PlanInput, via: string, sub: string[]): string {
  const name = input.name;
  const help = input.help;
  let call: string;
  const versioned = help && sub.length === 0 &&
    /(^|\s)--version\b/.test(help.text);
  const expression = help?.model.positionals?.some((p) => /^(expression|expr)$/i.test(p.name));
  const dry = help?.model.options.find((o) =>
    o.names.some((n) => /^--(dry-run|no-act|simulate|just-print)$/.test(n)) && !o.value
  );
  const tmpRun = `work=$(mktemp -d) || fail "cannot make a temp folder"
trap 'rm -rf "$work"' EXIT
cd "$work" || fail "cannot enter $work"`;
  if (versioned) {
    // A typed option and a positional reach the program; a program that prints its version
    // only when alone (coreutils' test) gets it alone.
    call = `# One harmless call through the tool: --version and a positional (".").
${tmpRun}
out=$("$tool" --version . 2>&1 </dev/null) || out=$("$tool" --version 2>&1 </dev/null) ||
  fail "${name} --version failed (exit status $?): $out"
[ -n "$out" ] || fail "${name} --version printed nothing"`;
  } else if (expression && help?.model.positionals?.length === 1) {
    call = `# One harmless call through the tool: the expression "." (true: a non-empty word).
${tmpRun}
out=$("$tool" . 2>&1 </dev/null) || fail "${name} . failed (exit status $?): $out"`;
  } else if (dry) {
    const flag = dry.names.find((n) => n.startsWith("--")) ?? dry.flag;
    call =
      `# One harmless call through the tool: ${flag} and a positional ("."), in an empty folder.
${tmpRun}
${
        basename(input.program) === "git"
          ? 'git init -q . || fail "cannot make a git repository"\n'
          : ""
      }out=$("$tool" ${flag} . 2>&1 </dev/null); status=$?
[ "$status" -lt 126 ] || fail "${name} ${flag} . could not run (exit status $status): $out"
if printf '%s\n' "$out" | grep -qiE 'unknown option|unrecognized option|invalid option|not a .* command'; then
  fail "${name} ${flag} . was refused: $out"
fi`;
  } else if (help && !help.capped) {
    // An option name is the most stable mark of the program's help (a first line may hold
    // the path the program was run by); else the first line's start.
    const flags = help.model.options.map((o) => o.flag).filter((f) => help.text.includes(f))
      .sort((a, b) => b.length - a.length);
    const first = help.text.split("\n").map((l) => l.trim()).find((l) => l !== "") ?? "";
    const marker = flags[0] ?? first.slice(0, 24);
    call = `# One harmless call: the program's own help${
      via === "wrapper" ? " (run by the wrapper)" : ""
    }.
printf '%s\\n' "$help" | grep -qF -- ${
      shQuote(marker)
    } || fail "${name} --help does not show the program's help"`;
  } else {
    call =
      `# The program's help could not be read, so no call is harmless: check that it is still there.
[ -x ${shQuote(input.program)} ] || fail "${input.program} is not an executable file"`;
  }
  return `#!/bin/sh
# Selftest of the tool "${name}", made by \`magi new\`: checks the --help contract (a summary
# line and a usage line first), then makes one harmless call.
fail() { echo "FAIL: $1"; exit 1; }
tool="$(cd "$(dirname "$0")" && pwd)/${name}"
help=$("$tool" --help 2>&1) || fail "${name} --help exited with status $?"
two=$(printf '%s\\n' "$help" | grep -v '^[[:space:]]*$' | head -n 2)
[ "$(printf '%s\\n' "$two" | wc -l)" -eq 2 ] || fail "${name} --help printed fewer than two lines"
printf '%s\\n' "$two" | grep -qi 'usage' || fail "no usage line among the first two lines of ${name} --help"
${call}
echo "ok: ${name}"
`;
}
