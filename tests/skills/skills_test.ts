import assert from "node:assert/strict";
import { join } from "node:path";
import { discoverSkills } from "../../lib/sources/skills/discover.ts";
import { skillTool } from "../../lib/sources/skills/tool.ts";
import { magi, tempDir } from "../helpers.ts";
import { reply, scriptedServer, toolResultsIn } from "../agent/fake_provider.ts";
import { agentConfig } from "../agent/setup.ts";

const ENV = { FAKE_PROVIDER_KEY: "fake-provider-key-0001" };

/** A skill folder in the standard layout: SKILL.md, scripts/, references/. */
async function makeSkill(
  root: string,
  name: string,
  front: string,
  extra: Record<string, string> = {},
): Promise<string> {
  const dir = join(root, name);
  await Deno.mkdir(join(dir, "scripts"), { recursive: true });
  await Deno.writeTextFile(join(dir, "SKILL.md"), `---\n${front}\n---\n\n# ${name}\n\nBody.\n`);
  for (const [rel, text] of Object.entries(extra)) {
    await Deno.mkdir(join(dir, rel, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, rel), text);
  }
  return dir;
}

Deno.test("discoverSkills() finds user and project skills; a bad SKILL.md costs only itself", async () => {
  await using dir = await tempDir();
  const user = join(dir.path, "config", "magi", "skills");
  const repo = join(dir.path, "repo");
  await Deno.mkdir(join(repo, ".git"), { recursive: true });
  await makeSkill(user, "greet", "name: greet\ndescription: Greets people by name.");
  await makeSkill(
    join(repo, ".claude", "skills"),
    "lint",
    'name: lint\ndescription: "Lints: fast"',
  );
  await makeSkill(join(repo, ".magi", "skills"), "broken", "name: [unclosed\ndescription: x");
  await makeSkill(join(repo, ".agents", "skills"), "mismatch", "name: other\ndescription: y");
  await makeSkill(join(repo, ".magi", "skills"), "greet", "name: greet\ndescription: shadow");
  const warnings: string[] = [];
  const skills = discoverSkills(
    join(repo),
    { XDG_CONFIG_HOME: join(dir.path, "config") },
    (m) => warnings.push(m),
  );
  assert.deepEqual(skills.map((s) => [s.name, s.description, s.project]), [
    ["greet", "Greets people by name.", false],
    ["lint", "Lints: fast", true],
  ]);
  assert.equal(warnings.length, 3, warnings.join("\n"));
  assert.match(
    warnings.join("\n"),
    /skill .*broken\/SKILL\.md: its front matter is not valid YAML/,
  );
  assert.match(
    warnings.join("\n"),
    /mismatch\/SKILL\.md: "name" is "other" but the folder is "mismatch"/,
  );
  assert.match(warnings.join("\n"), /skill "greet" in .*\.magi\/skills\/greet left out/);
});

Deno.test("magi skills --json lists them; a bad one is one stderr line", async () => {
  await using dir = await tempDir();
  await Deno.mkdir(join(dir.path, ".git"));
  await makeSkill(join(dir.path, ".magi", "skills"), "greet", "name: greet\ndescription: Greets.");
  await makeSkill(join(dir.path, ".magi", "skills"), "bad", "description: no name");
  const out = await magi(["skills", "--json"], { cwd: dir.path });
  assert.equal(out.code, 0, out.stderr);
  assert.deepEqual(JSON.parse(out.stdout), [{
    name: "greet",
    description: "Greets.",
    dir: join(dir.path, ".magi", "skills", "greet"),
    project: true,
  }]);
  assert.equal(out.stderr.split("\n").filter((l) => l.includes("SKILL.md")).length, 1, out.stderr);
  assert.match(out.stderr, /bad\/SKILL\.md: "name" must be/);
});

Deno.test("magi run: the model loads a skill and runs its script through the door", async () => {
  await using dir = await tempDir();
  const home = join(dir.path, "home");
  const work = join(dir.path, "work");
  await Deno.mkdir(join(work, ".git"), { recursive: true });
  await makeSkill(
    join(home, "config", "magi", "skills"),
    "greet",
    "name: greet\ndescription: Greets a person by name with the house style.",
    {
      "scripts/hello.sh":
        'echo "Hello, $1, from the greet skill in $(basename "$MAGI_SKILL_DIR")"\n',
      "references/style.md": "Always greet warmly.\n",
    },
  );
  const script = (i: number) => {
    const steps = [
      reply("openai", "", [{ id: "c1", name: "skill", args: { name: "greet" } }]),
      reply("openai", "", [{
        id: "c2",
        name: "skill",
        args: { name: "greet", script: "scripts/hello.sh", args: ["Ada"] },
      }]),
      reply("openai", "Greeted Ada."),
    ];
    return steps[i];
  };
  {
    await using server = scriptedServer("openai", (i) => script(i));
    // The skill's folder is a root with the checkout (it lies in the system temp folder, no
    // root: a user's skill outside the roots is denied as any path outside them).
    const config = await agentConfig(dir.path, "openai", server.url, { roots: [work, home] });
    const run = await magi(["run", "greet Ada", "--auto", "--config", config], {
      cwd: work,
      env: ENV,
      home,
    });
    assert.equal(run.code, 0, run.stderr);
    // Only the catalogue is in the system prompt; the body comes when loaded.
    const system = JSON.stringify(server.requests[0].json.messages);
    assert.match(system, /- greet: Greets a person by name with the house style\./);
    assert.ok(!system.includes("Body."));
    const [loaded] = toolResultsIn("openai", server.requests[1]);
    assert.match(loaded.content, /# greet\n\nBody\./);
    assert.match(loaded.content, /- references\/style\.md\n- scripts\/hello\.sh/);
    const ran = toolResultsIn("openai", server.requests[2])[1];
    assert.equal(ran.content, "Hello, Ada, from the greet skill in greet\n");
  }
  {
    // Without --auto the script is asked about: with no one to ask, a denial the model reads.
    await using server = scriptedServer("openai", (i) => script(i));
    const config = await agentConfig(dir.path, "openai", server.url, { roots: [work, home] });
    const run = await magi(["run", "greet Ada", "--config", config], {
      cwd: work,
      env: ENV,
      home,
    });
    assert.equal(run.code, 0, run.stderr);
    const ran = toolResultsIn("openai", server.requests[2])[1];
    assert.match(ran.content, /hello\.sh Ada: denied \(no person to approve it/);
  }
});

Deno.test("discoverSkills() refuses a project's SKILL.md that links out of its folder", async () => {
  await using dir = await tempDir();
  await Deno.mkdir(join(dir.path, ".git"));
  await Deno.writeTextFile(join(dir.path, "key"), "---\nname: leak\ndescription: k\n---\nKEY\n");
  const skill = join(dir.path, ".magi", "skills", "leak");
  await Deno.mkdir(skill, { recursive: true });
  await Deno.symlink(join(dir.path, "key"), join(skill, "SKILL.md"));
  const warnings: string[] = [];
  assert.deepEqual(discoverSkills(dir.path, {}, (m) => warnings.push(m)), []);
  assert.match(warnings[0], /leak\/SKILL\.md: it is a link that leads out of the skill's folder/);
});

Deno.test("a skill folder swapped for a link after discovery is not read through", async () => {
  await using dir = await tempDir();
  const repo = join(dir.path, "repo");
  const home = join(dir.path, "home");
  await Deno.mkdir(join(repo, ".git"), { recursive: true });
  await Deno.mkdir(home);
  await Deno.writeTextFile(join(home, ".netrc"), "machine x login bob password NetrcSecret\n");
  const skills = join(repo, ".claude", "skills");
  await makeSkill(skills, "notes", 'name: notes\ndescription: "Notes."', {
    "references/a.md": "A\n",
  });
  const found = discoverSkills(repo, {}, () => {});
  const tool = skillTool(found, () => ({}) as never);
  const call = async (args: Record<string, unknown>) => {
    const said: string[] = [];
    const outcome = await tool.invoke({
      args,
      cwd: repo,
      env: {},
      timeoutMs: 5000,
      emit: {
        said: (c: string | Uint8Array) =>
          void said.push(typeof c === "string" ? c : new TextDecoder().decode(c)),
      },
    } as never);
    return { ...outcome, said: said.join("") + (outcome.note ?? "") };
  };
  assert.match((await call({ name: "notes", file: "references/a.md" })).said, /^A\n/);
  // A sandboxed program moves the folder aside and puts a link to HOME in its place.
  await Deno.rename(join(skills, "notes"), join(skills, "notes.old"));
  await Deno.symlink(home, join(skills, "notes"));
  for (const args of [{ name: "notes", file: ".netrc" }, { name: "notes" }]) {
    const r = await call(args);
    assert.equal(r.isError, true, r.said);
    assert.doesNotMatch(r.said, /NetrcSecret/);
  }
});
