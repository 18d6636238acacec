import assert from "node:assert/strict";
import { join } from "node:path";
import { listSessions, Session } from "../../lib/agent/session.ts";
import { Masker } from "../../lib/pipeline/mask.ts";
import { systemPrompt } from "../../lib/agent/prompt.ts";
import { tempDir } from "../helpers.ts";

const masker = new Masker([{ name: "DB_PASSWORD", value: "hunter2-correct-horse" }]);

Deno.test("Session: events are masked, appended as JSON lines, and read back on open", async () => {
  await using dir = await tempDir();
  const s = Session.create(dir.path, masker, { cwd: "/w", provider: "p", model: "m" });
  s.append({ type: "user", text: "the password is hunter2-correct-horse" });
  s.append({
    type: "assistant",
    text: "",
    tool_calls: [{ id: "c1", name: "say", arguments: '{"x":1}' }],
  });
  s.close();
  const text = await Deno.readTextFile(join(s.dir, "transcript.jsonl"));
  assert.ok(!text.includes("hunter2"));
  assert.match(text, /the password is \$DB_PASSWORD/);
  const warnings: string[] = [];
  const again = Session.open(dir.path, s.id.slice(0, 12), masker, (m) => warnings.push(m));
  assert.equal(again.id, s.id);
  assert.deepEqual(again.messages().map((m) => m.role), ["user", "assistant"]);
  assert.deepEqual(again.unanswered().map((c) => c.id), ["c1"]);
  assert.deepEqual(warnings, []);
  again.close();
  const mirror = await Deno.readTextFile(s.contextPath);
  assert.match(mirror, /## user\n\nthe password is \$DB_PASSWORD/);
  assert.deepEqual(listSessions(dir.path).map((x) => [x.id, x.title]), [
    [s.id, "the password is $DB_PASSWORD"],
  ]);
});

Deno.test("Session.open() ignores a half-written last line with a warning", async () => {
  await using dir = await tempDir();
  const s = Session.create(dir.path, masker, { cwd: "/w", provider: "p", model: "m" });
  s.append({ type: "user", text: "hello" });
  s.close();
  const path = join(s.dir, "transcript.jsonl");
  await Deno.writeTextFile(path, '{"type":"assistant","text":"hal', { append: true });
  const warnings: string[] = [];
  const again = Session.open(dir.path, "last", masker, (m) => warnings.push(m));
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /ignored a half-written last line/);
  assert.deepEqual(again.messages(), [{ role: "user", text: "hello" }]);
  again.append({ type: "user", text: "again" });
  again.close();
  const lines = (await Deno.readTextFile(path)).trim().split("\n");
  assert.deepEqual(lines.map((l) => JSON.parse(l).type), ["session", "user", "user"]);
});

Deno.test("Session.open(): a torn last line, even one a newline ends, leaves the session resumable", async () => {
  await using dir = await tempDir();
  const s = Session.create(dir.path, masker, { cwd: "/w", provider: "p", model: "m" });
  s.append({ type: "user", text: "nap" });
  s.append({
    type: "assistant",
    text: "",
    tool_calls: [{ id: "c1", name: "nap", arguments: "{}" }],
  });
  s.close();
  const path = join(s.dir, "transcript.jsonl");
  // A write the OS split: the head of a tool result, then (from the next append) a newline.
  await Deno.writeTextFile(path, '{"type":"tool_result","id":"c1","sa\n', { append: true });
  const warnings: string[] = [];
  const again = Session.open(dir.path, "last", masker, (m) => warnings.push(m));
  assert.deepEqual(warnings.length, 1, warnings.join("\n"));
  assert.match(warnings[0], /ignored a half-written last line/);
  assert.deepEqual(again.unanswered().map((c) => c.id), ["c1"]);
  again.append({ type: "user", text: "go on" });
  again.close();
  const lines = (await Deno.readTextFile(path)).trim().split("\n");
  assert.deepEqual(lines.map((l) => JSON.parse(l).type), ["session", "user", "assistant", "user"]);
});

Deno.test("Session.open() names the missing session", async () => {
  await using dir = await tempDir();
  assert.throws(() => Session.open(dir.path, "nope", masker, () => {}), /no session "nope"/);
});

Deno.test("systemPrompt() carries the working directory, the date and AGENTS.md, bounded", async () => {
  await using dir = await tempDir();
  await Deno.mkdir(join(dir.path, ".git"));
  await Deno.mkdir(join(dir.path, "sub"));
  await Deno.writeTextFile(join(dir.path, "AGENTS.md"), "Run `make test`.\n" + "x".repeat(40_000));
  const prompt = systemPrompt({
    cwd: join(dir.path, "sub"),
    env: { USER: "ada" },
    now: new Date("2026-03-04T05:06:07Z"),
  });
  assert.match(prompt, /working for ada/);
  assert.match(prompt, new RegExp(`Working directory: ${join(dir.path, "sub")}`));
  assert.match(prompt, /Date: 2026-03-04/);
  assert.match(prompt, /Run `make test`\./);
  assert.match(prompt, /AGENTS\.md cut at 32768 of 40017 bytes/);
  assert.ok(prompt.length < 34_000);
});

Deno.test("Session.open() skips lines that are JSON but not session events", async () => {
  await using dir = await tempDir();
  const s = Session.create(dir.path, masker, { cwd: "/w", provider: "p", model: "m" });
  s.append({ type: "user", text: "hello" });
  s.close();
  const path = join(s.dir, "transcript.jsonl");
  await Deno.writeTextFile(path, 'null\n{"type":"assistant","text":5,"tool_calls":"nope"}\n', {
    append: true,
  });
  const warnings: string[] = [];
  const again = Session.open(dir.path, "last", masker, (m) => warnings.push(m));
  assert.equal(warnings.length, 2);
  assert.match(warnings[0], /line 3 of transcript.jsonl is not a session event; skipped/);
  assert.deepEqual(again.messages(), [{ role: "user", text: "hello" }]);
  again.close();
});

Deno.test("session: an old transcript reads unchanged; prune and compaction events apply where they stand", async () => {
  const { Session } = await import("../../lib/agent/session.ts");
  const { Masker } = await import("../../lib/pipeline/mask.ts");
  const dir = await Deno.makeTempDir();
  try {
    const id = "20260101-000000-abcdef";
    await Deno.mkdir(`${dir}/${id}`);
    const big = "r".repeat(5000);
    const lines = [
      { type: "session", v: 1, id, at: "t", cwd: "/", provider: "p", model: "m" },
      { type: "user", at: "t", text: "go" },
      {
        type: "assistant",
        at: "t",
        text: "",
        tool_calls: [{ id: "c1", name: "t", arguments: "{}" }],
      },
      { type: "tool_result", at: "t", id: "c1", name: "t", said: big, is_error: false },
      // An old usage event: no cached or reasoning counts.
      { type: "usage", at: "t", input_tokens: 10, output_tokens: 2 },
      {
        type: "assistant",
        at: "t",
        text: "",
        tool_calls: [{ id: "c2", name: "t", arguments: "{}" }],
      },
      { type: "tool_result", at: "t", id: "c2", name: "t", said: big, is_error: false },
      { type: "prune", at: "t", upto: 3, tokens_before: 10, tokens_after: 5 },
      { type: "assistant", at: "t", text: "Half way.", tool_calls: [] },
      { type: "user", at: "t", text: "more" },
    ];
    await Deno.writeTextFile(
      `${dir}/${id}/transcript.jsonl`,
      lines.map((l) => JSON.stringify(l)).join("\n") + "\n",
    );
    const warnings: string[] = [];
    const s = Session.open(dir, id, new Masker([]), (w) => warnings.push(w));
    assert.deepEqual(warnings, []);
    const m = s.messages();
    assert.equal(m.length, 7);
    const r1 = m[2].role === "tool" ? m[2].result.said : "";
    const r2 = m[4].role === "tool" ? m[4].result.said : "";
    assert.match(
      r1,
      /^r{600}\n\[magi: older tool result pruned to its first 600 of 5000 characters/,
    );
    assert.ok(r1.includes(`${s.dir}/spill/pruned-c1.txt`));
    assert.equal(r2, big);
    s.append({
      type: "compaction",
      summary: "Two results made.",
      kept: 2,
      trigger: "command",
      tokens_before: 9,
      tokens_after: 3,
    });
    const after = s.messages();
    assert.deepEqual(after.map((x) => x.role), ["user", "assistant", "user"]);
    assert.match(
      after[0].role === "user" ? after[0].text : "",
      /summarised[\s\S]*Two results made\.$/,
    );
    s.close();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
