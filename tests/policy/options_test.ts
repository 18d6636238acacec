/**
 * Every entry of the option tables (`lib/policy/options.ts`, `options_git.ts`) with an example line: a safe
 * option of a read-only program is allowed, a dangerous one (writes, starts programs,
 * follows symlinks, reads a list of files, makes git read other config) is not; an option
 * the table does not know, or an ambiguous abbreviation, is asked about.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPolicy, type Policy } from "../../lib/policy/decide.ts";
import { judge } from "../../lib/policy/facts.ts";
import { optionKind } from "../../lib/policy/option_reader.ts";
import { PROGRAM_OPTIONS, type ProgramOptions } from "../../lib/policy/options.ts";
import { GIT_GLOBAL_OPTIONS, GIT_SUBCOMMAND_OPTIONS } from "../../lib/policy/options_git.ts";
import { readLine } from "../../lib/policy/shell.ts";
import { tempDir } from "../helpers.ts";

/** An example line using one option: `PROG OPT [VALUE] f.txt`. */
function example(program: string, option: string, kind: string, spec: ProgramOptions): string {
  const { arg } = optionKind(kind);
  if (spec.style === "find") {
    if (arg === "command") return `find . ${option} true ';'`;
    return arg === "value" ? `find . ${option} 1` : `find . ${option}`;
  }
  const value = arg === "value"
    ? (option.startsWith("--") ? `${option}=1` : `${option} 1`)
    : option;
  return NO_OPERANDS.has(program) ? `${program} ${value}` : `${program} ${value} f.txt`;
}

/** Programs the default rules allow only without operands. */
const NO_OPERANDS = new Set<string>([]);

/** Whether a program is installed here (tree may not be): a missing one is asked about. */
function installed(program: string): boolean {
  const name = program.split(" ")[0];
  return (Deno.env.get("PATH") ?? "").split(":").some((dir) => {
    try {
      return Deno.statSync(join(dir, name)).isFile;
    } catch {
      return false;
    }
  });
}

/** Entries the default rules ask about for reasons of their own (not the option table). */
const RULE_ASKS = new Set<string>([]);

function verdict(policy: Policy, root: string, command: string) {
  return judge(policy, { tool: "run", source: "builtin", args: { command }, cwd: root });
}

async function withPolicy(fn: (policy: Policy, root: string) => void) {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "f.txt"), "x\n");
  await Deno.writeTextFile(join(dir.path, "1"), "x\n");
  fn(loadPolicy(undefined, "test", [dir.path], Deno.env.toObject()), dir.path);
}

const TABLES: [string, ProgramOptions][] = [
  ...Object.entries(PROGRAM_OPTIONS),
  ...Object.entries(GIT_SUBCOMMAND_OPTIONS).map(([sub, spec]) =>
    [`git ${sub}`, spec] as [
      string,
      ProgramOptions,
    ]
  ),
];

Deno.test("each option in the table: safe ones are allowed, dangerous ones are not", async () => {
  await withPolicy((policy, root) => {
    const problems: string[] = [];
    let checked = 0;
    for (const [program, spec] of TABLES) {
      for (const [option, kind] of Object.entries(spec.options)) {
        const line = example(program, option, kind, spec);
        const dangerous = optionKind(kind).danger !== undefined;
        const [c] = readLine(line).commands.filter((c) => c.via.length === 0);
        if (dangerous !== (c.optionProblem !== undefined)) {
          problems.push(`${line}: judged ${c.optionProblem ?? "read-only"}`);
        }
        // `git branch` allows only itself and --show-current: the others ask by no rule.
        const ruled = program !== "git branch";
        if (!ruled || RULE_ASKS.has(`${program} ${option}`) || !installed(program)) continue;
        const v = verdict(policy, root, line);
        checked++;
        if (dangerous ? v.decision === "allow" : v.decision !== "allow") {
          problems.push(`${line}: ${v.decision} (${v.reason})`);
        }
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(checked > 500, `${checked} lines checked`);
  });
});

Deno.test("each git option before the subcommand: those that read other config ask", async () => {
  await withPolicy((policy, root) => {
    const problems: string[] = [];
    for (const [option, kind] of Object.entries(GIT_GLOBAL_OPTIONS)) {
      const { arg, danger } = optionKind(kind);
      const line = arg === "value" ? `git ${option} . status` : `git ${option} status`;
      const v = verdict(policy, root, line);
      if ((danger !== undefined) !== (v.decision !== "allow")) {
        problems.push(`${line}: ${v.decision} (${v.reason})`);
      }
    }
    assert.deepEqual(problems, []);
  });
});

Deno.test("each value rule: a value that makes an option dangerous asks", async () => {
  await withPolicy((policy, root) => {
    for (const [program, spec] of TABLES) {
      for (const [option, [pattern]] of Object.entries(spec.values ?? {})) {
        const line = `${program} ${option}=x${pattern}x`;
        assert.notEqual(verdict(policy, root, line).decision, "allow", line);
        assert.equal(verdict(policy, root, `${program} ${option}=x`).decision, "allow", option);
      }
    }
  });
});

Deno.test("options the table does not hold, ambiguous abbreviations and find's tail ask", async () => {
  await withPolicy((policy, root) => {
    const cases: [string, "allow" | "ask" | "deny"][] = [
      ["ls --bogus", "ask"],
      ["ls -j", "ask"],
      ["cat --number=1 f.txt", "ask"], // a flag given a value
      ["git log --bogus", "ask"],
      ["git --bogus status", "ask"],
      ["wc --files0-from=f.txt", "ask"],
      ["wc --files0=f.txt", "ask"], // an abbreviation of --files0-from
      ["ls --deref f.txt", "ask"], // --dereference or --dereference-command-line…
      ["grep --dereference-r x .", "ask"], // abbreviates --dereference-recursive
      ["grep --derefe x .", "ask"],
      ["tree --outp x", "ask"],
      ["git diff --outp=x", "ask"],
      ["git diff --ext", "ask"],
      ["git diff --textc", "ask"],
      ["git log --show-sig", "ask"],
      ["git diff --output=../x", "deny"],
      ["find -- . -exec true ';'", "ask"],
      ["find . -- -delete", "ask"],
      ["find -- . -fprint x", "ask"],
      ["find . -newermt 2020-01-01", "allow"],
      ["grep --count x f.txt", "allow"],
      ["grep --cou x f.txt", "allow"], // a unique abbreviation, expanded
      ["grep -5 x f.txt", "allow"],
      ["head -n5 f.txt", "allow"],
      ["head -5 f.txt", "allow"],
      ["tail -n +2 f.txt", "allow"],
      ["ls -la --color=never", "allow"],
      ["echo --anything -x", "allow"],
      ["git log --oneline -5", "allow"],
      ["git diff --stat HEAD~1 -- f.txt", "allow"],
      ["git show --stat HEAD", "allow"],
      ["git status --porcelain=v1", "allow"],
      ["git --no-pager log -3", "allow"],
      ["git -C . status", "allow"],
      ["git st", "ask"], // not a built-in: an alias, maybe
      ["git log --format=%G?", "ask"], // checks signatures: starts gpg
      ["git show --pretty=format:%GS HEAD", "ask"],
      ["git log --form '%h %GK'", "ask"],
      ["git log --format='%h %s'", "allow"],
    ];
    const problems = cases.flatMap(([line, want]) => {
      const v = verdict(policy, root, line);
      return v.decision === want ? [] : [`${line}: ${v.decision}, want ${want} (${v.reason})`];
    });
    assert.deepEqual(problems, []);
  });
});
