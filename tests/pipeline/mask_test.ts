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
