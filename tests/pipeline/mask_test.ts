import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { collectSecrets, isCredentialName, Masker } from "../../lib/pipeline/mask.ts";
import { decodeByteString, utf8ByteString } from "../../lib/pipeline/bytes.ts";

const SECRET = 's3cr"et-VALUE/with+special chars';
const masker = new Masker([{ name: "MY_TOKEN", value: SECRET }]);

Deno.test("isCredentialName() knows credential names and leaves look-alikes alone", () => {
  for (
    const name of [
      "GITHUB_TOKEN",
      "OPENAI_API_KEY",
      "APIKEY",
      "PGPASSWORD",
      "AWS_SECRET_ACCESS_KEY",
      "DB_PASS",
    ]
  ) {
    assert.ok(isCredentialName(name), name);
  }
  for (
    const name of ["GIT_AUTHOR_NAME", "KEYBOARD_LAYOUT", "HOME", "PATH", "PWD", "TOKENIZER_PATH"]
  ) {
    assert.ok(!isCredentialName(name), name);
  }
});

Deno.test("collectSecrets() names values shorter than 6 bytes instead of masking them", () => {
  const { secrets, tooShort } = collectSecrets(
    {
      API_TOKEN: "abc",
      GITHUB_TOKEN: "ghp_1234567890",
      PLAIN: "not-a-secret",
      EXTRA: "listed-value",
    },
    ["EXTRA"],
    ["literal-secret"],
  );
  assert.deepEqual(tooShort, ["API_TOKEN"]);
  assert.deepEqual(secrets.map((s) => s.name).sort(), ["EXTRA", "GITHUB_TOKEN", "SECRET"]);
});

Deno.test("maskText() replaces the value and its base64, URL and JSON forms", () => {
  const b64 = (prefix: string) => Buffer.from(prefix + SECRET).toString("base64");
  const text = [
    `plain ${SECRET}`,
    `b64 ${b64("")}`,
    `b64-1 ${b64("a")}`,
    `b64-2 ${b64("ab")}`,
    `url ${encodeURIComponent(SECRET)}`,
    `url-lower ${encodeURIComponent(SECRET).toLowerCase()}`,
    `form ${encodeURIComponent(SECRET).replaceAll("%20", "+")}`,
    `json ${JSON.stringify(SECRET)}`,
  ].join("\n");
  const masked = masker.maskText(text);
  assert.ok(masked.includes("$MY_TOKEN"));
  assert.ok(!masked.includes(SECRET));
  assert.ok(!masked.includes("VALUE"), masked);
  for (const prefix of ["", "a", "ab"]) {
    const encoded = b64(prefix);
    assert.ok(!masked.includes(encoded.slice(4, -4)), `base64 after ${prefix.length} bytes leaked`);
  }
  assert.ok(!masked.includes("with%2Bspecial"));
  assert.ok(!masked.includes('s3cr\\"et'));
});

Deno.test("a stream catches a secret split across chunks at every offset", () => {
  const text = utf8ByteString(`before ${SECRET} after`);
  for (let cut = 0; cut <= text.length; cut++) {
    for (const second of [cut, Math.min(text.length, cut + 3)]) {
      const stream = masker.stream();
      const out = stream.push(text.slice(0, cut)) + stream.push(text.slice(cut, second)) +
        stream.push(text.slice(second)) + stream.end();
      assert.equal(decodeByteString(out), "before $MY_TOKEN after", `cut at ${cut}/${second}`);
    }
  }
});

Deno.test("each line of a multi-line secret is masked on its own", () => {
  const m = new Masker([{
    name: "MULTI_KEY",
    value: "-----BEGIN KEY-----\nAAAABBBBCCCC\n-----END KEY-----",
  }]);
  assert.equal(m.maskText("got AAAABBBBCCCC here"), "got $MULTI_KEY here");
});

Deno.test("a masker with no secrets passes bytes through unchanged", () => {
  const none = new Masker([]);
  const stream = none.stream();
  assert.equal(stream.push("\xff\x00abc") + stream.end(), "\xff\x00abc");
});

Deno.test("the fast search finds exactly what a plain regular expression finds", () => {
  // No value has a fragment worth indexing (see fragments.ts), so only whole values match,
  // and none can overlap another (overlapping finds are masked as one).
  const values = ["abcdef-123", "xyzxyzxyz", "qqqqqq", "abcabcabc-abcabc", "ab\u00e9c€e"];
  const secrets = values.map((value, i) => ({ name: `S${i}`, value }));
  const filler = Array.from(
    { length: 40 },
    (_, i) => ({ name: `F${i}`, value: crypto.randomUUID() }),
  );
  // Few patterns take the plain alternation; many take the gram filter.
  const small = { masker: new Masker(secrets.slice(0, 1)), values: values.slice(0, 1) };
  const large = { masker: new Masker([...secrets, ...filler]), values };
  assert.ok(small.masker.patternCount < 24 && large.masker.patternCount > 24);
  let seed = 7;
  const random = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  const alphabet = "abcxyz-123 \n";
  const all = values.map((v) => utf8ByteString(v));
  for (let round = 0; round < 300; round++) {
    let text = "";
    while (text.length < 400) {
      text += random(4) === 0
        ? all[random(all.length)].slice(0, random(3) === 0 ? 4 : undefined)
        : alphabet[random(alphabet.length)];
    }
    for (const { masker, values: used } of [small, large]) {
      const forms = used.map((v, i) => [utf8ByteString(v), `$S${i}`]);
      const sorted = [...forms].sort((a, b) => b[0].length - a[0].length);
      const plain = new RegExp(
        sorted.map(([f]) =>
          [...f].map((c) => "\\x" + c.charCodeAt(0).toString(16).padStart(2, "0")).join("")
        ).join("|"),
        "g",
      );
      const expected = text.replace(plain, (f) => sorted.find(([g]) => g === f)![1]);
      assert.equal(masker.maskBytes(text), expected, `round ${round}`);
      const stream = masker.stream();
      let streamed = "";
      for (let i = 0; i < text.length;) {
        const j = Math.min(text.length, i + 1 + random(40));
        streamed += stream.push(text.slice(i, j));
        i = j;
      }
      assert.equal(streamed + stream.end(), expected, `round ${round}, streamed`);
    }
  }
});

Deno.test("the JSON and URL escapes of other languages' libraries are caught", () => {
  const m = new Masker([
    { name: "AWS_SECRET_ACCESS_KEY", value: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" },
    { name: "DB_PASSWORD", value: "pässwörd-Geheimnis-2024<&>" },
    { name: "X_PASSWORD", value: "Hunter2!Secret*(x)" },
  ]);
  const leaks = [
    "wJalrXUtnFEMI/K7MDENG%2BbPxRfiCYEXAMPLEKEY", // Python quote(): keeps "/"
    "wJalrXUtnFEMI\\/K7MDENG+bPxRfiCYEXAMPLEKEY", // PHP json_encode: "\/"
    "p\\u00e4ssw\\u00f6rd-Geheimnis-2024<&>", // Python json.dumps: ensure_ascii
    "p\\u00e4ssw\\u00f6rd-Geheimnis-2024\\u003c\\u0026\\u003e", // and Go's HTML-safe escapes
    "Hunter2%21Secret%2A%28x%29", // strict RFC 3986 (curl --data-urlencode)
    "Hunter2%21Secret%2a%28x%29", // lower-case hex
  ];
  for (const leak of leaks) assert.match(m.maskText(`v=${leak};`), /^v=\$[A-Z_]+;$/, leak);
});
