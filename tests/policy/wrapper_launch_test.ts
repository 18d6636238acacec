/**
 * A `run` line allowed without asking starts only the programs it was judged by: a program
 * in the roots (or in a PATH folder inside them, shadowing the real one) never runs from a
 * model's call, whichever way the line reaches it — getopt's combined and abbreviated
 * options of a wrapper, bash builtins' names started as programs by a wrapper, `time` after
 * `|`, or a relative program word after a `cd`. And a rule denying `rm` meets `rm` however
 * `env -S` spells it.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { runTool } from "../../lib/runtime/run_tool.ts";
import { tempDir, testRuntime } from "../helpers.ts";

const EVIL = '#!/bin/sh\necho PWNED >> "$(dirname "$0")/pwned"\necho PWNED\n';

/** Lines that would start a program in the roots; none may be allowed. */
const ATTACKS = [
  // getopt: `-S` last in a group of short options, a long option abbreviated.
  "env -vS./evil ls",
  "env -iS./evil ls",
  "env --split-s=./evil ls",
  "env --split-str ./evil ls",
  // coreutils 9.5's env -a NAME (an older env refuses the option).
  "env -a ls ./evil",
  // bash's exec: `-a NAME` combined with -l or -c.
  "exec -la ls ./evil",
  "exec -cla ls ./evil",
  // `bin` is a symlink to the folder of the real ls; `sub/bin/ls` is a file in the roots.
  "cd sub && bin/ls",
  "cd sub; cd . && bin/ls",
  // PATH's first folder, inside the roots, holds time, echo and command.
  "\\time ls",
  "'time' ls",
  "env time ls",
  "nice time ls",
  "echo | time ls",
  "env echo hi",
  "exec echo hi",
  "timeout 5 echo hi",
  "env command ls",
  "exec command ls",
];

Deno.test("no wrapper form starts a program from the roots without asking", async () => {
  await using dir = await tempDir();
  const root = await Deno.realPath(dir.path);
  const ls = Deno.realPathSync(
    new TextDecoder().decode(new Deno.Command("which", { args: ["ls"] }).outputSync().stdout)
      .trim(),
  );
  await Deno.mkdir(join(root, "sub", "bin"), { recursive: true });
  await Deno.mkdir(join(root, "pbin"));
  await Deno.symlink(dirname(ls), join(root, "bin"));
  for (const file of ["evil", "sub/bin/ls", "pbin/time", "pbin/echo", "pbin/command"]) {
    await Deno.writeTextFile(join(root, file), EVIL, { mode: 0o755 });
  }
  await using t = await testRuntime({
    cwd: root,
    env: { PATH: `${join(root, "pbin")}:${Deno.env.get("PATH")}` },
    config: { shipped_tools: false, roots: [root] },
  });
  const problems: string[] = [];
  for (const command of ATTACKS) {
    const r = await runTool(t.rt, { name: "run", args: { command } });
    if (!r.is_error || /PWNED/.test(r.said)) problems.push(`${command}: ${r.said}`);
  }
  assert.deepEqual(problems, []);
  assert.equal(await Deno.stat(join(root, "pwned")).then(() => true, () => false), false);
  assert.equal(await Deno.stat(join(root, "sub/bin/pwned")).then(() => true, () => false), false);
  assert.equal(await Deno.stat(join(root, "pbin/pwned")).then(() => true, () => false), false);

  // The same wrappers around what they claim are still allowed and run.
  for (const command of ["time ls sub", "command ls sub", "env ls sub", "nice -n5 ls sub"]) {
    const r = await runTool(t.rt, { name: "run", args: { command } });
    assert.equal(r.is_error, false, `${command}: ${r.said}`);
    assert.match(r.said, /^bin$/m, command);
  }
  const echo = await runTool(t.rt, { name: "run", args: { command: "echo hi" } });
  assert.equal(echo.said.trim(), "hi");
});

Deno.test("a rule denying rm meets rm however env -S spells it", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "victim"), "keep\n");
  await using t = await testRuntime({
    cwd: dir.path,
    config: {
      shipped_tools: false,
      roots: [dir.path],
      policy: { rules: [{ id: "no-rm", tool: "run", command: "rm *", decision: "deny" }] },
    },
  });
  const lines = [
    "env -S 'rm\\_victim'",
    "env -S '-i rm victim'",
    "env -S '-u X rm victim'",
    "env -S '-- rm victim'",
    "env -S '-S\\_rm\\_victim'",
    "env -vS'rm victim'",
    "env --split-str='rm victim'",
    "env -S \"'rm' victim\"",
  ];
  const problems: string[] = [];
  for (const command of lines) {
    const r = await runTool(t.rt, { name: "run", args: { command }, caller: "person" });
    if (!r.is_error || !/denied by the policy — deny by rule "no-rm"/.test(r.said)) {
      problems.push(`${command}: ${r.said}`);
    }
  }
  assert.deepEqual(problems, []);
  assert.equal(await Deno.readTextFile(join(dir.path, "victim")), "keep\n");
});
