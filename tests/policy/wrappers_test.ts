/**
 * Every wrapper of the table (`lib/policy/wrappers.ts`) with its example line: the `rm` it
 * wraps meets a rule denying `rm`; a wrapper marked `ask` is asked about even when what it
 * wraps is read-only; an option a wrapper does not know asks.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPolicy } from "../../lib/policy/decide.ts";
import { judge } from "../../lib/policy/facts.ts";
import { readLine } from "../../lib/policy/shell.ts";
import { WRAPPERS } from "../../lib/policy/wrappers.ts";
import { tempDir } from "../helpers.ts";

Deno.test("each wrapper's example: the rm it wraps is denied by a rule denying rm", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "victim"), "x\n");
  const policy = loadPolicy(
    { rules: [{ id: "no-rm", tool: "run", command: "rm *", decision: "deny" }] },
    "test",
    [dir.path],
    Deno.env.toObject(),
  );
  const problems: string[] = [];
  for (const [name, spec] of Object.entries(WRAPPERS)) {
    assert.ok(spec.example.startsWith(`${name} `) && spec.example.includes("rm victim"), name);
    const v = judge(policy, {
      tool: "run",
      source: "builtin",
      args: { command: spec.example },
      cwd: dir.path,
    });
    if (v.decision !== "deny" || v.rule?.id !== "no-rm") {
      problems.push(`${spec.example}: ${v.decision} (${v.reason})`);
    }
    // Started by env, so that bash's keyword `time` is the program too.
    const line = readLine(`env ${spec.example}`);
    const inner = line.commands.find((c) => c.program === "rm");
    if (!inner?.via.includes(name)) {
      problems.push(`${spec.example}: rm not reached through ${name}`);
    }
    // A wrapper that asks does so whatever it wraps.
    const around = readLine(spec.example.replace("rm victim", "ls"));
    if (spec.ask && !around.problems.includes(spec.ask)) {
      problems.push(`${spec.example}: not asked about (${around.problems.join("; ")})`);
    }
    if (!spec.ask && around.problems.length > 0 && !/^(su|flock|watch)$/.test(name)) {
      problems.push(`${spec.example}: ${around.problems.join("; ")}`);
    }
  }
  assert.deepEqual(problems, []);
});

Deno.test("an option a wrapper does not know is a reason to ask", () => {
  for (const line of ["timeout --bogus 5 ls", "nice -Z ls", "env --frob ls", "xargs -j ls"]) {
    assert.ok(readLine(line).problems.some((p) => /does not know/.test(p)), line);
  }
  assert.deepEqual(readLine("timeout --preserve 5 ls").problems, []); // a unique abbreviation
  assert.deepEqual(readLine("nice -5 ls").problems, []);
});
