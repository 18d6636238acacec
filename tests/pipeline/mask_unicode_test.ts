/**
 * A known secret dressed in Unicode that a terminal shows as the plain secret — zero-width
 * spaces or joiners, soft hyphens, combining marks, no-break spaces between its characters,
 * fullwidth letters — or cut into numbered lines (`fold -w8 | cat -n`, `grep -n`) is masked in
 * every channel, the invisible characters with it.
 */
import assert from "node:assert/strict";
import { decodeByteString, utf8ByteString } from "../../lib/pipeline/bytes.ts";
import { Masker } from "../../lib/pipeline/mask.ts";
import { streamed as streamedBytes } from "./mask_helpers.ts";
import { assertMasked, throughChannels } from "./mask_channels.ts";

const AWS = "k9Jx2Qm7Lp4Vt8Rz1Wn5Yb3Hc6Fd0Gs9Ea2Ui7Oo";
/** The 8-character pieces of the secret. */
const PIECES = AWS.match(/.{1,8}/g)!;

/** `text` masked as a stream of UTF-8 byte strings, cut anywhere (inside characters too). */
const streamed = (m: Masker, text: string, seed: number) =>
  decodeByteString(streamedBytes(m, utf8ByteString(text), seed));

/** What a person reads of `text`: compatibility forms, no invisible characters. */
const onScreen = (text: string) => text.normalize("NFKC").replace(/[\p{Cf}\p{Mn}]/gu, "");

const DRESSED: Record<string, string> = {
  "zero-width space": [...AWS].map((c) => c + "\u200b").join(""),
  "zero-width joiner every 2": AWS.replace(/../g, "$&\u200d"),
  "soft hyphen every 3": AWS.replace(/.../g, "$&\u00ad"),
  "word joiner and BOM": [...AWS].map((c) => c + "\u2060\ufeff").join(""),
  "no-break space": [...AWS].map((c) => c + "\u00a0").join(""),
  "combining acute": [...AWS].map((c) => c + "\u0301").join(""),
  "fullwidth": [...AWS].map((c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0)).join(""),
  "cat -n": PIECES.map((p, i) => `${String(i + 1).padStart(6)}\t${p}`).join("\n") + "\n",
  "grep -n": PIECES.map((p, i) => `${i + 1}:${p}`).join("\n") + "\n",
};

Deno.test("a secret with invisible or lookalike characters, or in numbered lines, is masked however a stream is cut", () => {
  const masker = new Masker([{ name: "AWS", value: AWS }]);
  for (const [what, form] of Object.entries(DRESSED)) {
    const text = `before ${form} after\n`;
    for (
      const out of [masker.maskText(text), streamed(masker, text, 5), streamed(masker, text, 61)]
    ) {
      for (const p of PIECES) assert.ok(!onScreen(out).includes(p), `${what}: ${p} in ${out}`);
      assert.match(out, /^before .*\$AWS/, what);
      assert.match(out, / after\n$/, what);
      // Nothing of the secret is left around `$AWS` (a stream may leave an invisible one).
      if (!what.includes(" -n")) assert.match(onScreen(out), /^before \$AWS ? after\n$/, what);
    }
  }
  // Accented and fullwidth words in ordinary text stay as they are.
  const text = "café naïve ｈｅｌｌｏ 東京 e\u0301 ok\n";
  assert.equal(masker.maskText(text), text);
});

Deno.test("a tool printing a secret with invisible separators or line numbers leaks it into no channel", async () => {
  const channels = await throughChannels(
    [
      `printf %s "$AWS_SECRET_ACCESS_KEY" | sed 's/./&\\xe2\\x80\\x8b/g'; echo`,
      `printf %s "$AWS_SECRET_ACCESS_KEY" | sed 's/.../&\\xc2\\xad/g'; echo`,
      `printf %s "$AWS_SECRET_ACCESS_KEY" | sed 's/./&\\xcc\\x81/g'; echo`,
      `python3 -c 'import os;print("".join(chr(ord(c)+0xfee0) for c in os.environ["AWS_SECRET_ACCESS_KEY"]))'`,
      `printf %s "$AWS_SECRET_ACCESS_KEY" | fold -w8 | cat -n`,
      `printf %s "$AWS_SECRET_ACCESS_KEY" | fold -w8 | grep -n .`,
    ].join("\n"),
    { env: { AWS_SECRET_ACCESS_KEY: AWS } },
  );
  for (const [channel, text] of Object.entries(channels)) {
    // JSON channels escape non-ASCII as \uXXXX only sometimes: read them as the person would.
    const seen = onScreen(
      channel === "shown"
        ? text
        : text.replace(/\\u([0-9a-f]{4})/gi, (_: string, h: string) =>
          String.fromCharCode(parseInt(h, 16))),
    );
    for (const p of PIECES) assert.ok(!seen.includes(p), `${channel} holds ${p}:\n${text}`);
  }
  assertMasked(channels, PIECES, "$AWS_SECRET_ACCESS_KEY");
});

Deno.test("bytes past Unicode's last code point (F4 90 80 80 and up) are masked around, not a crash", () => {
  const masker = new Masker([{ name: "TOKEN", value: "ab12cd34ef56gh78" }]);
  // Each a lead byte F4 and continuation bytes that decode past U+10FFFF, between pieces.
  const text = "x ab12\xf4\x90\x80\x80cd34\xf4\xbf\xbf\xbfef56-gh78 y\n";
  const out = masker.maskBytes(text);
  assert.ok(out.includes("\xf4\x90\x80\x80"), JSON.stringify(out));
  assert.equal(
    masker.maskBytes("ab12cd34ef56gh78 \xf4\x90\x80\x80\n"),
    "$TOKEN \xf4\x90\x80\x80\n",
  );
});
