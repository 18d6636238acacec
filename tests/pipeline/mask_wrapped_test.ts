import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { Masker } from "../../lib/pipeline/mask.ts";
import { direct, SECRET, streamed, textWithSecret, throughPipeline } from "./mask_helpers.ts";

const masker = new Masker([{ name: "DEPLOY_TOKEN", value: SECRET }]);

/** Base64 of `text`, wrapped at `width` columns with `eol` after each line. */
function wrapped(text: string, width: number, eol = "\n"): string {
  const b64 = Buffer.from(text).toString("base64");
  return b64.match(new RegExp(`.{1,${width}}`, "g"))!.join(eol) + eol;
}

/**
 * Whether masked base64 output still reveals a 4-byte stretch of `secret`: its lines are
 * joined, cut at each `$NAME`, and each part decoded at each of the 4 alignments.
 */
function reveals(masked: string, secret: string): string | undefined {
  const parts = masked.replace(/\r?\n/g, "").split(/\$[A-Z_]+/);
  for (const part of parts) {
    for (let drop = 0; drop < 4; drop++) {
      const decoded = Buffer.from(part.slice(drop), "base64").toString("latin1");
      for (let i = 0; i + 4 <= secret.length; i++) {
        if (decoded.includes(secret.slice(i, i + 4))) return secret.slice(i, i + 4);
      }
    }
  }
  return undefined;
}

Deno.test("base64 wrapped at 64 and 76 columns no longer reveals the secret at any offset", () => {
  for (const width of [64, 76]) {
    for (const eol of ["\n", "\r\n"]) {
      for (let pre = 0; pre < 60; pre++) {
        const input = wrapped("x".repeat(pre) + SECRET + " and more text after it", width, eol);
        const masked = masker.maskBytes(input);
        const what = `width ${width}, ${JSON.stringify(eol)}, offset ${pre}`;
        assert.equal(reveals(masked, SECRET), undefined, `${what}: ${masked}`);
        assert.ok(masked.includes("$DEPLOY_TOKEN"), what);
        assert.equal(masked.split(eol).length, input.split(eol).length, `${what}: lines kept`);
        assert.equal(streamed(masker, input, pre), masked, `${what}, streamed`);
      }
    }
  }
});

Deno.test("a wrapped secret's pieces become $NAME on each line and the rest is kept", () => {
  const value = "0123456789abcdefghij";
  const m = new Masker([{ name: "API_KEY", value }]);
  const b64 = Buffer.from("x".repeat(42) + value + "x".repeat(30)).toString("base64");
  // The value's first 18 bytes are base64 characters 56–79, which the break after 64 cuts.
  assert.equal(b64.slice(56, 80), Buffer.from(value.slice(0, 18)).toString("base64"));
  const input = b64.slice(0, 64) + "\n" + b64.slice(64) + "\n";
  assert.equal(m.maskBytes(input), b64.slice(0, 56) + "$API_KEY\n$API_KEY" + b64.slice(80) + "\n");
});

Deno.test("a long secret wrapped over several lines is masked on each of them", () => {
  const value = "-----BEGIN-----" + "k3y".repeat(60) + "-----END-----";
  const m = new Masker([{ name: "SIGNING_KEY", value }]);
  for (const pre of [0, 1, 2, 30]) {
    const masked = m.maskBytes(wrapped("#".repeat(pre) + value + "#", 64));
    assert.equal(reveals(masked, value), undefined, masked);
  }
});

Deno.test("wrapped base64 and text without a secret pass unchanged", () => {
  const random = crypto.getRandomValues(new Uint8Array(30000));
  const big = new Masker(
    Array.from({ length: 40 }, (_, i) => ({ name: `S${i}`, value: crypto.randomUUID() })),
  );
  for (const m of [masker, big]) {
    const b64 = wrapped(Buffer.from(random).toString("latin1"), 76);
    assert.equal(m.maskBytes(b64), b64);
    assert.equal(streamed(m, b64, 3), b64);
    const text = textWithSecret("an ordinary value").repeat(3);
    assert.equal(m.maskBytes(text), text);
    assert.equal(streamed(m, text, 5), text);
  }
});

Deno.test("a stream catches a wrapped secret whatever the chunks", () => {
  const input = wrapped(textWithSecret(), 76) + wrapped(textWithSecret(), 64, "\r\n");
  const whole = masker.maskBytes(input);
  assert.equal(reveals(whole, SECRET), undefined);
  for (let seed = 1; seed < 40; seed++) assert.equal(streamed(masker, input, seed), whole);
});

const ENCODERS = [
  "base64",
  "base64 -w 64 | sed 's/$/\\r/'",
  ...(new Deno.Command("sh", { args: ["-c", "command -v openssl"] }).outputSync().success
    ? ["openssl base64"]
    : []),
];

Deno.test("real base64 and openssl base64 output through the pipeline hides the secret", async () => {
  const stdin = textWithSecret();
  for (const command of ENCODERS) {
    const plain = await direct(command, stdin);
    assert.ok(reveals(plain, SECRET), `${command} output holds the secret before masking`);
    const said = await throughPipeline(command, stdin, { DEPLOY_TOKEN: SECRET });
    assert.equal(reveals(said, SECRET), undefined, `${command}: ${said}`);
    assert.ok(said.includes("$DEPLOY_TOKEN"), command);
  }
});

Deno.test("real base64 output of a text with no secret comes through unchanged", async () => {
  const stdin = textWithSecret("nothing secret here");
  const said = await throughPipeline("base64", stdin, { DEPLOY_TOKEN: SECRET });
  assert.equal(said, await direct("base64", stdin));
});

/** Like {@link reveals}, for hex output: each part decoded at both nibble alignments. */
function revealsHex(masked: string, secret: string): string | undefined {
  const parts = masked.replace(/\r?\n/g, "").split(/\$[A-Z_]+/);
  for (const part of parts) {
    for (let drop = 0; drop < 2; drop++) {
      const decoded = Buffer.from(part.slice(drop), "hex").toString("latin1");
      for (let i = 0; i + 4 <= secret.length; i++) {
        if (decoded.includes(secret.slice(i, i + 4))) return secret.slice(i, i + 4);
      }
    }
  }
  return undefined;
}

Deno.test("the secret's hex, in either case, becomes $NAME", () => {
  const hex = Buffer.from(SECRET).toString("hex");
  for (const form of [hex, hex.toUpperCase()]) {
    assert.equal(masker.maskText(`digest: 00${form}ff.`), "digest: 00$DEPLOY_TOKENff.");
  }
  assert.equal(masker.maskText(hex.slice(0, -2)), hex.slice(0, -2), "a part is no match");
});

Deno.test("hex wrapped at 60 columns (xxd -p) no longer reveals the secret at any offset", () => {
  for (const upper of [false, true]) {
    for (let pre = 0; pre < 32; pre++) {
      let hex = Buffer.from("x".repeat(pre) + SECRET + " after").toString("hex");
      if (upper) hex = hex.toUpperCase();
      const input = hex.match(/.{1,60}/g)!.join("\n") + "\n";
      const masked = masker.maskBytes(input);
      assert.equal(revealsHex(masked, SECRET), undefined, `offset ${pre}: ${masked}`);
      assert.equal(streamed(masker, input, pre), masked, `offset ${pre}, streamed`);
    }
  }
});

Deno.test("a short secret's hex masks only itself, not ordinary hex", () => {
  const short = new Masker([{ name: "PIN_CODE", value: "4711ab" }]);
  const hex = Buffer.from(crypto.getRandomValues(new Uint8Array(20000))).toString("hex");
  const dump = hex.match(/.{1,60}/g)!.join("\n") + "\n";
  assert.equal(short.maskBytes(dump), dump);
  assert.equal(short.maskText("id 343731316162"), "id $PIN_CODE");
});

Deno.test("real xxd -p output through the pipeline hides the secret", async () => {
  const stdin = textWithSecret();
  for (const command of ["xxd -p", "xxd -p -u", "xxd -p | tr -d '\\n'"]) {
    const plain = await direct(command, stdin);
    assert.ok(revealsHex(plain, SECRET), `${command} output holds the secret before masking`);
    const said = await throughPipeline(command, stdin, { DEPLOY_TOKEN: SECRET });
    assert.equal(revealsHex(said, SECRET), undefined, `${command}: ${said}`);
    assert.ok(said.includes("$DEPLOY_TOKEN"), command);
  }
  const clean = textWithSecret("nothing secret here");
  const said = await throughPipeline("xxd -p", clean, { DEPLOY_TOKEN: SECRET });
  assert.equal(said, await direct("xxd -p", clean));
});
