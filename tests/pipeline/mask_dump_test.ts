import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { Masker } from "../../lib/pipeline/mask.ts";
import { direct, SECRET, streamed, textWithSecret, throughPipeline } from "./mask_helpers.ts";

const masker = new Masker([{ name: "DEPLOY_TOKEN", value: SECRET }]);

/**
 * Whether a masked dump still reveals 4 bytes of `secret` in a row, read as a person would:
 * the hex of all lines joined (offsets dropped) and decoded, and the character columns
 * joined; each cut at every `$NAME`. Knows the layouts of xxd, hexdump -C and od.
 */
function revealsInDump(masked: string, secret: string): string | undefined {
  let hex = "";
  let chars = "";
  for (const line of masked.split("\n")) {
    const body = line.replace(/^[0-9a-fA-F]*:? ?/, "");
    const framed = /^(.*?) +[|>](.*)[|<]$/.exec(body);
    const [area, column] = framed
      ? [framed[1], framed[2]]
      : / {2}/.test(body.trim())
      ? [body.slice(0, body.lastIndexOf("  ")), body.slice(body.lastIndexOf("  ") + 2)]
      : [body, ""];
    hex += area.replace(/ /g, "");
    chars += column;
  }
  const windows = Array.from({ length: secret.length - 3 }, (_, i) => secret.slice(i, i + 4));
  const decoded = hex.split(/\$[A-Z_]+/).flatMap((part) =>
    [0, 1].map((drop) => Buffer.from(part.slice(drop), "hex").toString("latin1"))
  );
  for (const text of [...decoded, ...chars.split(/\$[A-Z_]+/)]) {
    const hit = windows.find((w) => text.includes(w));
    if (hit) return hit;
  }
  return undefined;
}

const DUMPS = [
  "xxd",
  "xxd -g 1 -u",
  "xxd -g 4",
  "hexdump -C",
  "od -A x -t x1z",
  "od -t x1",
  "od -An -tx1",
];

Deno.test("canonical hex dumps no longer reveal the secret, in the hex or the characters", async () => {
  const stdin = textWithSecret(SECRET, 20);
  for (const command of DUMPS) {
    const plain = await direct(command, stdin);
    assert.ok(revealsInDump(plain, SECRET), `${command} output holds the secret before masking`);
    const masked = masker.maskText(plain);
    assert.equal(revealsInDump(masked, SECRET), undefined, `${command}:\n${masked}`);
    assert.equal(masked.split("\n").length, plain.split("\n").length, `${command}: lines kept`);
    assert.equal(streamed(masker, plain, command.length), masked, `${command}, streamed`);
  }
});

Deno.test("a dump's secret becomes $NAME in the hex and in the characters of each line", async () => {
  const plain = await direct("hexdump -C", `line 0: ${SECRET} end\n`);
  assert.equal(
    masker.maskText(plain),
    [
      "00000000  6c 69 6e 65 20 30 3a 20  $DEPLOY_TOKEN  |line 0: $DEPLOY_TOKEN|",
      "00000010  $DEPLOY_TOKEN  |$DEPLOY_TOKEN|",
      "00000020  $DEPLOY_TOKEN 20 65 6e 64 0a  |$DEPLOY_TOKEN end.|",
      "00000030",
      "",
    ].join("\n"),
  );
});

Deno.test("secrets back to back in a dump are all masked, whatever the chunks", async () => {
  const other = "another-credential-0123456789";
  const m = new Masker([
    { name: "DEPLOY_TOKEN", value: SECRET },
    { name: "OTHER_TOKEN", value: other },
  ]);
  const stdin = `${SECRET}${other}${SECRET}.${SECRET}`.repeat(12) + "\n";
  for (const command of ["xxd", "hexdump -C"]) {
    const plain = await direct(command, stdin);
    const masked = m.maskText(plain);
    assert.equal(revealsInDump(masked, SECRET), undefined, `${command}:\n${masked}`);
    assert.equal(revealsInDump(masked, other), undefined, `${command}:\n${masked}`);
    for (let seed = 1; seed < 30; seed++) {
      assert.equal(streamed(m, plain, seed), masked, `${command}, seed ${seed}`);
    }
  }
});

Deno.test("dumps and tables without a secret pass unchanged", async () => {
  const stdin = textWithSecret("nothing secret here", 20);
  for (const command of DUMPS) {
    const plain = await direct(command, stdin);
    assert.equal(masker.maskText(plain), plain, command);
  }
  const table = "  1024  2048  4096  8192  16384  32768  65536 131072\n".repeat(20);
  assert.equal(masker.maskText(table), table);
});

Deno.test("real xxd and hexdump -C output through the pipeline hides the secret", async () => {
  const stdin = textWithSecret(SECRET, 20);
  for (const command of ["xxd", "hexdump -C"]) {
    const said = await throughPipeline(command, stdin, { DEPLOY_TOKEN: SECRET });
    assert.equal(revealsInDump(said, SECRET), undefined, `${command}:\n${said}`);
    assert.ok(said.includes("$DEPLOY_TOKEN"), command);
  }
  const clean = textWithSecret("nothing secret here", 20);
  assert.equal(
    await throughPipeline("xxd", clean, { DEPLOY_TOKEN: SECRET }),
    await direct("xxd", clean),
  );
});
