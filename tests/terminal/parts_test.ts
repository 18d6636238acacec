import assert from "node:assert/strict";
import { approvalOf, choicesLine, normaliseAnswer, pickChoice } from "../../lib/terminal/choice.ts";
import { capLines, moreLine, pages } from "../../lib/terminal/display_cap.ts";
import { costOf, costReport, Tally } from "../../lib/terminal/cost.ts";
import { MarkdownBlocks } from "../../lib/terminal/markdown.ts";
import { SlashTable } from "../../lib/terminal/slash.ts";
import { fitWidth, StatusLine } from "../../lib/terminal/status_line.ts";
import { describeRetry, HttpWatch } from "../../lib/agent/http_watch.ts";
import { Output } from "../../lib/pipeline/out.ts";
import { Masker } from "../../lib/pipeline/mask.ts";

Deno.test("prompt style: [y]es / [n]o / [a]lways, answered by letter, word or number", () => {
  assert.equal(choicesLine(["yes", "no", "always"]), "[y]es / [n]o / [a]lways");
  assert.equal(choicesLine(["save", "skip"]), "[s]ave / s[k]ip");
  for (const a of ["y", "Y", "yes", " YES ", "1"]) {
    assert.equal(pickChoice(a, ["yes", "no"]), "yes");
  }
  assert.equal(pickChoice("k", ["save", "skip"]), "skip");
  assert.equal(pickChoice("maybe", ["yes", "no"]), undefined);
  assert.equal(normaliseAnswer("y", ["yes", "no"]), "yes");
  assert.equal(normaliseAnswer(" free text ", undefined), "free text");
  assert.equal(approvalOf("y"), "yes");
  assert.equal(approvalOf("A"), "always");
  assert.equal(approvalOf("n"), "no");
  assert.equal(approvalOf("whatever"), "no");
});

Deno.test("display cap: the first lines, then how many more and where the whole is", () => {
  const text = Array.from({ length: 25 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
  const { head, more } = capLines(text, 20);
  assert.equal(head.split("\n").length, 21);
  assert.ok(head.endsWith("line 20\n"));
  assert.equal(more, 5);
  assert.equal(
    moreLine(5, "/s/1-run.txt"),
    "… 5 more lines — full: /s/1-run.txt (/last shows it all)",
  );
  assert.deepEqual(capLines("a\nb", 20), { head: "a\nb\n", more: 0 });
  assert.equal(pages(text, 10).length, 3);
});

Deno.test("cost: tokens in, out and cached; priced per million from config", () => {
  const tally = new Tally();
  tally.add({ input_tokens: 1000, output_tokens: 200, cache_read_input_tokens: 400 });
  tally.add({ input_tokens: 500, output_tokens: 100 });
  assert.equal(costOf(1_000_000, 0, 0, { input: 2 }), 2);
  assert.equal(costOf(1_000_000, 1_000_000, 500_000, { input: 2, output: 10, cached: 1 }), 11.5);
  assert.equal(costOf(1, 1, 0, undefined), undefined);
  const priced = costReport(tally, "m1", { m1: { input: 2, output: 10, cached: 1 } });
  assert.match(priced, /1,500 in · 300 out · 400 cached \(2 requests\)/);
  assert.match(priced, /\$0\.0056 at the configured prices/);
  assert.match(costReport(tally, "other", {}), /no price for "other"/);
});

Deno.test("markdown blocks: whole blocks only; a fenced block keeps its blank lines", () => {
  const b = new MarkdownBlocks();
  assert.deepEqual(b.push("# Title\n\nPara"), ["# Title\n"]);
  assert.deepEqual(b.push("graph.\n\n```js\nconst a = 1;\n\n"), ["Paragraph.\n"]);
  assert.deepEqual(b.push("const b = 2;\n```\n\n"), ["```js\nconst a = 1;\n\nconst b = 2;\n```\n"]);
  b.push("cut off");
  b.reset();
  assert.ok(b.empty);
  b.push("tail");
  assert.equal(b.end(), "tail");
});

Deno.test("slash table: run, unknown, help, completion; others may add commands", async () => {
  const t = new SlashTable();
  const ran: string[] = [];
  t.add({
    name: "model",
    args: "[name]",
    help: "the model",
    run: (a) => void ran.push(a),
    complete: () => ["gpt-4o", "llama3"],
  });
  t.add({ name: "exit", aliases: ["quit"], help: "leave", run: () => "exit" });
  t.add({ name: "mcp:review", help: "an MCP prompt", run: () => {} });
  assert.deepEqual(await t.run("/model gpt-4o"), { outcome: undefined });
  assert.deepEqual(ran, ["gpt-4o"]);
  assert.deepEqual(await t.run("/quit"), { outcome: "exit" });
  assert.match((await t.run("/nope") as { unknown: string }).unknown, /no command \/nope; \/help/);
  assert.ok(SlashTable.isCommand("/help"));
  assert.ok(!SlashTable.isCommand("/tmp/a.txt is big"));
  assert.match(t.help(), /\/model \[name\]\s+the model/);
  assert.deepEqual(t.complete("/m"), [["/model ", "/mcp:review "], "/m"]);
  assert.deepEqual(t.complete("/model ll"), [["llama3"], "ll"]);
  assert.throws(() => t.add({ name: "two words", help: "", run: () => {} }), /one word/);
});

Deno.test("status line: spinner, label, seconds, tokens, a retry's wait; pauses for a prompt", () => {
  let screen = "";
  let now = 1000;
  const out = Output.sink((t) => (screen += t), { masker: new Masker([]), terminal: true });
  const line = new StatusLine({ out, now: () => now, columns: () => 80 });
  line.show("thinking");
  now += 2500;
  line.tokens(42);
  line.retrying(2000, "429");
  assert.match(line.line(), /^. thinking · 2s · ↓ 42 tokens · retrying in 2 s \(429\) · Ctrl-C/);
  assert.ok(line.drawn);
  line.pause();
  assert.ok(!line.drawn);
  screen = "";
  line.draw();
  assert.equal(screen, "", "nothing is drawn while a prompt is up");
  line.resume();
  assert.ok(line.drawn);
  line.stop();
  assert.ok(!line.drawn);
  assert.ok(screen.endsWith("\r\x1b[2K"));
  assert.equal(fitWidth("日本語のテキスト", 7), "日本語…");
});

Deno.test("HTTP watch: the SDK's retries are told with their wait, and when sent; the last URL is kept", async () => {
  const told: string[] = [];
  const watch = new HttpWatch(
    2,
    (_input, _init) =>
      Promise.resolve(new Response("{}", { status: 429, headers: { "retry-after": "2" } })),
  );
  watch.listener = (r) => told.push(describeRetry(r));
  watch.sent = (attempt) => told.push(`sent ${attempt}`);
  await watch.fetch("http://127.0.0.1:9/v1/chat/completions?x=1", {
    headers: { "x-stainless-retry-count": "0" },
  });
  await watch.fetch("http://127.0.0.1:9/v1/chat/completions", {
    headers: { "x-stainless-retry-count": "2" },
  });
  // The last attempt: sent (the wait told before it is over), with no retry after it.
  assert.deepEqual(told, ["retrying in 2 s (429) 2/3", "sent 3"]);
  assert.equal(watch.lastUrl, "http://127.0.0.1:9/v1/chat/completions");
});
