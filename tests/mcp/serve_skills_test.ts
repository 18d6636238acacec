/**
 * `magi mcp` serves skills as MCP prompts: the SDK's client lists and gets a skill found in
 * the person's skills folder, its text masked; nothing of the skill runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "../helpers.ts";
import { everythingClient } from "./_serve.ts";

const SECRET = "tok-9a8b7c6d5e4f3a2b";

Deno.test("magi mcp serves each skill as a prompt: its instructions, its files, the request", async () => {
  await using home = await tempDir();
  const dir = join(home.path, "config", "magi", "skills", "release-notes");
  await Deno.mkdir(join(dir, "scripts"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "SKILL.md"),
    "---\nname: release-notes\ndescription: Writes release notes from the git log\n---\n" +
      `Read the log since the last tag. The token is ${SECRET}.\n`,
  );
  const marker = join(home.path, "ran");
  await Deno.writeTextFile(join(dir, "scripts", "tag.sh"), `#!/bin/sh\ntouch ${marker}\n`);
  const client = await everythingClient(home.path, {}, { MY_SERVICE_TOKEN: SECRET }, {
    mcp_servers: {},
  });
  try {
    const { prompts } = await client.listPrompts();
    const prompt = prompts.find((p) => p.name === "release-notes");
    assert.ok(prompt, JSON.stringify(prompts));
    assert.equal(prompt.description, "Writes release notes from the git log");
    assert.deepEqual(prompt.arguments?.map((a) => [a.name, a.required]), [["request", false]]);

    const got = await client.getPrompt({
      name: "release-notes",
      arguments: { request: "for v2.1" },
    });
    assert.equal(got.messages.length, 1);
    assert.equal(got.messages[0].role, "user");
    const text = (got.messages[0].content as { text: string }).text;
    assert.match(text, /^# skill release-notes/);
    assert.match(text, /Read the log since the last tag\. The token is \$MY_SERVICE_TOKEN\./);
    assert.match(text, /- scripts\/tag\.sh/);
    assert.match(text, /## request\n\nfor v2\.1/);
    assert.ok(!JSON.stringify(got).includes(SECRET), "masked");
    await assert.rejects(Deno.stat(marker), Deno.errors.NotFound);
    await assert.rejects(client.getPrompt({ name: "no-such-skill" }), /Unknown prompt/);
  } finally {
    await client.close();
  }
});
