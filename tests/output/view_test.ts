import assert from "node:assert/strict";
import { TerminalView } from "../../lib/terminal/view.ts";
import { Masker } from "../../lib/pipeline/mask.ts";
import { Output } from "../../lib/pipeline/out.ts";

const SECRET = "sk-live-0123456789abcdefghij";
const masker = new Masker([{ name: "API_KEY", value: SECRET }]);

function screens() {
  const s = { out: "", info: "" };
  const view = new TerminalView({
    json: false,
    out: Output.sink((t) => (s.out += t), { masker, terminal: true }),
    info: Output.sink((t) => (s.info += t), { masker, terminal: true }),
    fancy: false,
  });
  return { s, view };
}

Deno.test("TerminalView: a secret split across the model's deltas is masked on stdout", () => {
  const { s, view } = screens();
  for (const piece of ["The key is sk-li", "ve-0123456", "789abcdefghij, keep it."]) {
    view.text(piece);
  }
  view.answer("");
  assert.equal(s.out, "The key is $API_KEY, keep it.\n");
});

Deno.test("TerminalView: a tool call's arguments are masked before the line is shortened", () => {
  const { s, view } = screens();
  // The secret straddles where the line is cut: its start must not be shown.
  const args = JSON.stringify({ pad: "x".repeat(130), key: SECRET, more: "y".repeat(50) });
  view.toolCall({ id: "c1", name: "say", arguments: args });
  view.close();
  assert.ok(!s.info.includes(SECRET.slice(0, 8)), s.info);
  assert.match(s.info, /\$API_KEY/);
});
