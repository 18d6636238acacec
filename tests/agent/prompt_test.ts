import assert from "node:assert/strict";
import { systemPrompt } from "../../lib/agent/prompt.ts";
import { tempDir } from "../helpers.ts";

Deno.test("systemPrompt() says once where magi runs and whom it works for", async () => {
  await using dir = await tempDir();
  const now = new Date("2026-03-04T05:06:07Z");
  const named = systemPrompt({ cwd: dir.path, env: { USER: "ada" }, now });
  assert.equal(
    named.split("\n")[0],
    "You are magi, an agent running in a terminal, working for ada.",
  );
  const unnamed = systemPrompt({ cwd: dir.path, env: {}, now });
  assert.equal(
    unnamed.split("\n")[0],
    "You are magi, an agent running in a terminal, working for the person who started you.",
  );
});

Deno.test("systemPrompt() names the session's temp folder when given, and $TMPDIR", async () => {
  await using dir = await tempDir();
  const now = new Date("2026-05-01T12:00:00Z");
  const text = systemPrompt({ cwd: dir.path, env: {}, now, temp: "/t/magi-tmp-x" });
  assert.match(text, /^Temp folder: \/t\/magi-tmp-x \(.*`\$TMPDIR` in `run`.*read-only\)/m);
  assert.doesNotMatch(systemPrompt({ cwd: dir.path, env: {}, now }), /Temp folder/);
});
