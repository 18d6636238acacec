import assert from "node:assert/strict";
import { join } from "node:path";
import { Masker } from "../../lib/pipeline/mask.ts";
import { Output } from "../../lib/pipeline/out.ts";
import { terminalSafe } from "../../lib/core/terminal_safe.ts";
import { makeTool, tempDir } from "../helpers.ts";
import { hasScript, onTerminal } from "../terminal/pty.ts";
import { reply, scriptedServer } from "../agent/fake_provider.ts";
import { agentConfig, script } from "../agent/setup.ts";

/**
 * Clipboard write (OSC 52), title change (OSC 0), line erase, C1 CSI cursor move, bell, and
 * bidi controls that reorder what is read (right-to-left override, an isolate, a mark).
 */
const HOSTILE = "\x1b]52;c;aGVsbG8=\x07\x1b]0;owned\x07\x1b[2K\u009b2J\x07" +
  "\u202eresu\u2066x\u2069\u200f\u061c";
/** What {@link HOSTILE} looks like once made terminal-safe. */
const SHOWN_SAFE = "␛]52;c;aGVsbG8=␇␛]0;owned␇␛[2K<9B>2J␇<202E>resu<2066>x<2069><200F><61C>";
/** The bidi controls a terminal may apply (U+061C, U+200E/F, U+202A–E, U+2066–9). */
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

Deno.test("terminalSafe() shows every control visibly and keeps line feeds, tabs and CRLF", () => {
  assert.equal(terminalSafe(HOSTILE), SHOWN_SAFE);
  for (const c of "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069") {
    assert.ok(!BIDI.test(terminalSafe(`a${c}b`)), `U+${c.charCodeAt(0).toString(16)} is shown`);
  }
  assert.equal(terminalSafe("שלום עולם مرحبا"), "שלום עולם مرحبا", "right-to-left letters pass");
  assert.equal(terminalSafe("a\tb\r\nc\rd\x7f\x00"), "a\tb\r\nc␍d␡␀");
  assert.equal(terminalSafe("plain ✓ text\n"), "plain ✓ text\n");
});

Deno.test("Output: on a terminal foreign text is made safe, own escapes pass; elsewhere bytes are kept", () => {
  let screen = "";
  const tty = Output.sink((t) => (screen += t), { terminal: true, masker: new Masker([]) });
  tty.own("\x1b[2m");
  tty.text(HOSTILE);
  tty.own("\x1b[0m");
  assert.equal(screen, `\x1b[2m${SHOWN_SAFE}\x1b[0m`);
  let file = "";
  const pipe = Output.sink((t) => (file += t), { terminal: false, masker: new Masker([]) });
  pipe.text(HOSTILE);
  assert.equal(file, HOSTILE);
  let json = "";
  Output.sink((t) => (json += t), { terminal: true, masker: new Masker([]) }).json({ t: HOSTILE });
  // deno-lint-ignore no-control-regex -- control characters are what is looked for
  assert.ok(!/[\x00-\x1f\x7f-\x9f]/.test(json.trimEnd()) && !BIDI.test(json), json);
  assert.equal(JSON.parse(json).t, HOSTILE);
});

Deno.test("Output.stream(): a secret split across pieces is masked; held back only until end()", () => {
  const masker = new Masker([{ name: "API_TOKEN", value: "s3cr3t-value-123" }]);
  let screen = "";
  const out = Output.sink((t) => (screen += t), { terminal: true, masker });
  const stream = out.stream();
  for (const piece of ["Your token is s3c", "r3t-va", "lue-123 \x1b]0;x\x07", "and more ✓"]) {
    stream.push(piece);
  }
  stream.end();
  assert.equal(screen, "Your token is $API_TOKEN ␛]0;x␇and more ✓");
  screen = "";
  const lines = out.stream();
  for (const piece of ["one\r", "\ntwo\r", "three"]) lines.push(piece);
  lines.end();
  assert.equal(screen, "one\r\ntwo␍three", "CRLF split across pieces is a line end");
  screen = "";
  const plain = Output.sink((t) => (screen += t), { masker: new Masker([]) }).stream();
  plain.push("no secrets: ");
  assert.equal(screen, "no secrets: ", "nothing is held back without secrets");
});

/** The file the fixture tool waits for: the test makes it once the tool is shown running. */
const SHOWN = "tool-shown";

/** Runs `magi run` on a terminal (util-linux `script`) and returns the screen's bytes. */
async function runHostile(dir: string, args: string[], noColor: boolean): Promise<string> {
  await Deno.remove(join(dir, SHOWN)).catch(() => {});
  // The tool runs until it is shown running: a progress line on a terminal, else its call.
  // Not caught: a wait for a line magi no longer prints would hold the tool for its 20 s.
  return await onTerminal(args, {
    cwd: dir,
    noColor,
    shown: args.includes("--json")
      ? /"tool_call"/
      : noColor
      ? /→ hostile/
      : /running hostile · \ds/,
    whenShown: () => Deno.writeTextFile(join(dir, SHOWN), ""),
  });
}

Deno.test({
  name:
    "magi run on a terminal: a tool's and the model's control sequences reach the screen shown, not obeyed; --json keeps them",
  ignore: !hasScript,
  async fn() {
    await using dir = await tempDir();
    const tools = join(dir.path, "tools");
    // printf's octal escapes of HOSTILE's UTF-8 bytes (C1 U+009B is C2 9B).
    const printf = [...new TextEncoder().encode(HOSTILE)].map((b) =>
      b < 0x20 || b > 0x7e ? "\\" + b.toString(8).padStart(3, "0") : String.fromCharCode(b)
    ).join("");
    await makeTool(
      tools,
      "hostile",
      script(
        "hostile — print control sequences",
        "hostile",
        // Until the test saw it shown running (20 s at the most), then the sequences.
        `i=0; while [ ! -e '${
          join(dir.path, SHOWN)
        }' ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done
printf '${printf}'`,
      ),
    );
    // The model's text and a tool's name both carry them too.
    const scripted = () =>
      scriptedServer("openai", [
        reply("openai", `Look: ${HOSTILE}`, [{ id: "c1", name: "hostile", args: {} }]),
        reply("openai", `Done ${HOSTILE}`),
      ]);
    for (const noColor of [false, true]) {
      await using server = scripted();
      const config = await agentConfig(dir.path, "openai", server.url);
      const screen = await runHostile(
        dir.path,
        ["run", "go", "--config", config, "--tools-dir", tools],
        noColor,
      );
      assert.ok(!screen.includes("\x1b]"), "no OSC (clipboard, title) reaches the screen");
      assert.ok(!screen.includes("\u009b") && !screen.includes("\x07"), "no C1 CSI, no bell");
      assert.ok(!BIDI.test(screen), "no bidi control reaches the screen");
      assert.ok(screen.includes("<202E>resu<2066>x<2069>"), "the tool's bidi controls are shown");
      assert.ok(screen.includes("␛]52;c;aGVsbG8=␇"), "the tool's sequence is shown");
      assert.match(screen, /Look: ␛\]52;c;aGVsbG8=␇␛\]0;owned␇␛\[2K<9B>2J␇/);
      if (noColor) assert.ok(!screen.includes("\x1b"), "NO_COLOR: not one escape");
      else {
        // Only magi's own: colour, and the progress line's erase.
        // deno-lint-ignore no-control-regex -- escape sequences are what is looked for
        const escapes = screen.match(/\x1b\[[0-9;]*[A-Za-z]/g) ?? [];
        assert.ok(escapes.every((e) => ["\x1b[2m", "\x1b[0m", "\x1b[31m", "\x1b[2K"].includes(e)));
        assert.match(screen, /running hostile · \ds/);
      }
    }
    await using server = scripted();
    const config = await agentConfig(dir.path, "openai", server.url);
    const screen = await runHostile(
      dir.path,
      ["run", "go", "--json", "--config", config, "--tools-dir", tools],
      true,
    );
    assert.ok(!screen.includes("\x1b") && !screen.includes("\u009b"), "JSON escapes them");
    assert.ok(!BIDI.test(screen), "JSON escapes the bidi controls too");
    const events = screen.split(/\r?\n/).filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
    const result = events.find((e) => e.type === "tool_result");
    assert.equal(result.shown, HOSTILE, "--json keeps the bytes");
    assert.equal(events.find((e) => e.type === "text").text, `Look: ${HOSTILE}`);
  },
});
