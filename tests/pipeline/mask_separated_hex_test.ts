/**
 * A secret printed as one line of hex pairs with a separator — Python's `bytes.hex(" ")`,
 * `hexdump -e '/1 "%02X "'`, colon-separated like a fingerprint — is masked too.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { Masker, revealingForms } from "../../lib/pipeline/mask.ts";
import { direct, SECRET, streamed, throughPipeline } from "./mask_helpers.ts";

const masker = new Masker([{ name: "DEPLOY_TOKEN", value: SECRET }]);

/** Whether 4 bytes of the secret in a row can be read back from the hex pairs of `text`. */
function reveals(text: string): boolean {
  const windows = Array.from({ length: SECRET.length - 3 }, (_, i) => SECRET.slice(i, i + 4));
  return text.split(/\$[A-Z_]+/).some((part) => {
    const hex = part.replace(/[^0-9a-fA-F]/g, "");
    return [0, 1].some((drop) => {
      const decoded = Buffer.from(hex.slice(drop), "hex").toString("latin1");
      return windows.some((w) => decoded.includes(w));
    });
  });
}

const COMMANDS = [
  `python3 -c 'import sys; print(sys.stdin.buffer.read().hex(" "))'`,
  `python3 -c 'import sys; print(sys.stdin.buffer.read().hex(":").upper())'`,
  `hexdump -v -e '/1 "%02x "'`,
  `hexdump -v -e '/1 "%02X "'`,
];

Deno.test("hex pairs separated by spaces or colons on one line do not reveal the secret", async () => {
  const stdin = `id=42 ${SECRET} and ${SECRET}!`;
  for (const command of COMMANDS) {
    const plain = await direct(command, stdin);
    assert.ok(reveals(plain), `${command} shows the secret before masking`);
    const masked = masker.maskText(plain);
    assert.equal(reveals(masked), false, `${command}:\n${masked}`);
    assert.equal(masked.match(/\$DEPLOY_TOKEN/g)?.length, 2, `${command}: both occurrences`);
    for (const seed of [1, 7, 13]) {
      assert.equal(streamed(masker, plain, seed), masked, `${command}, streamed`);
    }
  }
});

Deno.test("separated hex with no secret in it comes through unchanged", () => {
  const text = Buffer.from("an ordinary line of text, nothing secret").toString("hex")
    .replace(/(..)(?!$)/g, "$1 ") + "\n" + "de:ad:be:ef:00:11:22:33\n";
  assert.equal(masker.maskText(text), text);
});

Deno.test("a tool printing a secret as separated hex through the pipeline shows $NAME", async () => {
  const said = await throughPipeline(
    `python3 -c 'import sys; print(sys.stdin.buffer.read().hex(" "))'`,
    SECRET,
    { DEPLOY_TOKEN: SECRET },
  );
  assert.equal(said, "$DEPLOY_TOKEN\n");
});

Deno.test("a long value (a key) gets no separated hex forms, which would lengthen what a stream holds", () => {
  const key = "k".repeat(300);
  const longest = Math.max(...revealingForms(key).map((form) => form.length));
  assert.equal(longest, 600, "its hex, two digits a byte, is its longest form");
  const token = "t".repeat(256);
  assert.ok(revealingForms(token).includes("74 ".repeat(255) + "74"));
});
