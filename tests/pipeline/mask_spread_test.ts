/**
 * A known secret cut into short pieces with separators between them (`fold -w8 | paste -sd,`,
 * `sed 's/./& /g'`, `'a'+'b'`), escaped for HTML or XML, encoded twice, in base32hex or as
 * decimal bytes is masked in every channel; the secret's characters spread through ordinary
 * text are not.
 */
import assert from "node:assert/strict";
import { Masker } from "../../lib/pipeline/mask.ts";
import { streamed } from "./mask_helpers.ts";
import { assertMasked, throughChannels } from "./mask_channels.ts";

const AWS = "k9Jx2Qm7Lp4Vt8Rz1Wn5Yb3Hc6Fd0Gs9Ea2Ui7Oo";
const GH = "ghp_R4nd0mT0kenV4lueAbCdEfGh1jKlMnOpQrSt";
const DB = `p<a&s's"w0rd!9`;
const ENV = { AWS_SECRET_ACCESS_KEY: AWS, GH_TOKEN: GH, DB_PASSWORD: DB };

/** Shell lines that print the secrets in pieces, and pieces whose presence is a leak. */
const LINES = [
  'printf %s "$AWS_SECRET_ACCESS_KEY" | fold -w 8 | paste -sd,',
  `printf %s "$AWS_SECRET_ACCESS_KEY" | sed 's/./& /g'; echo`,
  `printf %s "$GH_TOKEN" | sed 's/.\\{6\\}/&./g'; echo`,
  `printf %s "$GH_TOKEN" | base64 -w0 | fold -w7 | paste -sd' '`,
  `printf %s "$AWS_SECRET_ACCESS_KEY" | fold -w6 | sed "s/.*/'&'/" | paste -sd+`,
  `printf %s "$AWS_SECRET_ACCESS_KEY" | fold -w3 | paste -sd'\\t'`,
  `printf %s "$GH_TOKEN" | base64 -w0 | base64 -w0; echo`,
  `printf %s "$AWS_SECRET_ACCESS_KEY" | base64 -w0 | od -An -tx1 -v | tr -d ' \\n'; echo`,
  `printf %s "$AWS_SECRET_ACCESS_KEY" | od -An -tu1 -v -w100`,
  `printf '%s' "$DB_PASSWORD" | sed -e 's/&/\\&amp;/g' -e 's/</\\&lt;/g' -e "s/'/\\&#x27;/g" -e 's/"/\\&quot;/g'; echo`,
  `printf '<password>%s</password>\\n' "$(printf '%s' "$DB_PASSWORD" | sed -e 's/&/\\&amp;/g' -e 's/</\\&lt;/g')"`,
];
const LEAKS = [
  "k9Jx2Qm7",
  "Lp4Vt8Rz",
  "k 9 J x 2 Q",
  "ghp_R4",
  "nd0mT0",
  "Z2hwX1I",
  "'k9Jx2Q'",
  "k9J",
  "w0rd!9",
  btoa(btoa(GH)).slice(0, 20),
  "107  57  74",
];

Deno.test("a known secret in pieces with separators, HTML-escaped or encoded twice leaks into no channel", async () => {
  const channels = await throughChannels(LINES.join("\n"), { env: ENV });
  assertMasked(channels, LEAKS, "$AWS_SECRET_ACCESS_KEY");
  for (const mark of ["$GH_TOKEN", "$DB_PASSWORD"]) {
    for (const [channel, text] of Object.entries(channels)) assert.ok(text.includes(mark), channel);
  }
});

Deno.test("pieces with separators are masked however a stream is cut; spread letters in text are not", () => {
  const masker = new Masker([
    { name: "AWS", value: AWS },
    { name: "GH", value: GH },
    { name: "SECRET", value: "summer" },
  ]);
  const pieces = [
    AWS.match(/.{1,8}/g)!.join(","),
    AWS.split("").join(" "),
    AWS.match(/.{1,5}/g)!.map((p) => `"${p}"`).join(" + "),
    GH.match(/.{1,4}/g)!.join(":"),
  ];
  for (const piece of pieces) {
    const text = `before ${piece} after\n`;
    for (
      const out of [masker.maskText(text), streamed(masker, text, 5), streamed(masker, text, 77)]
    ) {
      assert.match(out, /^before "?\$(AWS|GH)"? after\n$/, `${piece} -> ${out}`);
    }
  }
  // Further apart than 4 separator characters, among other letters, or a word-like value:
  // ordinary text, kept.
  const kept = [
    AWS.match(/.{1,8}/g)!.join(" |    "),
    AWS.split("").join("x"),
    AWS.match(/.{1,4}/g)!.join(" and "),
    "s u m m e r, s-u-m-m-e-r",
    "The k9 key, the Jx2 one; Qm7 then Lp4, V and t8: Rz1 or Wn5.",
    "2024-01-31 12:34:56.789 INFO k=9 J=x 2=Q m=7",
  ];
  for (const text of kept) assert.equal(masker.maskText(text), text);
});
