/**
 * Private keys by shape in every channel: a PEM or OpenSSH private-key block is masked whether
 * or not magi knows its value — through maskText, and through a stream however it is cut.
 */
import assert from "node:assert/strict";
import { Masker } from "../../lib/pipeline/mask.ts";
import { maskPrivateKeys, PrivateKeyStream } from "../../lib/pipeline/private_keys.ts";

const KEY = [
  "-----BEGIN OPENSSH PRIVATE KEY-----",
  "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
  "QyNTUxOQAAACD6YUvkdnfiiIg7wk6ilErKPHp1T/6ep+Kuf89zgfgCIQAAAJBf1DOMX9Qz",
  "-----END OPENSSH PRIVATE KEY-----",
].join("\n");
const TEXT = `notes before\n${KEY}\nnotes after\n-- a dash line --\n`;

Deno.test("a private-key block is masked by its shape, with or without known secrets", () => {
  for (const masker of [new Masker([]), new Masker([{ name: "TOKEN", value: "s3cr3t-value-1" }])]) {
    const out = masker.maskText(TEXT + "token s3cr3t-value-1\n");
    assert.doesNotMatch(out, /b3BlbnNz|PRIVATE KEY-----/);
    assert.match(out, /^notes before\n\$PRIVATE_KEY\nnotes after\n-- a dash line --\n/);
  }
  assert.equal(
    maskPrivateKeys("x -----BEGIN RSA PRIVATE KEY-----\nMIIE never ends"),
    "x $PRIVATE_KEY",
  );
});

Deno.test("a stream masks a private key cut at every place, and releases plain text at once", () => {
  for (let at = 1; at < TEXT.length; at += 7) {
    for (const masker of [new Masker([]), new Masker([{ name: "T", value: "s3cr3t-value-1" }])]) {
      const stream = masker.stream();
      const out = stream.push(TEXT.slice(0, at)) + stream.push(TEXT.slice(at)) + stream.end();
      assert.equal(
        out,
        "notes before\n$PRIVATE_KEY\nnotes after\n-- a dash line --\n",
        `cut at ${at}`,
      );
    }
  }
  // Text with no dash near its end is not held back.
  const keys = new PrivateKeyStream();
  assert.equal(keys.push("an answer streaming"), "an answer streaming");
  assert.equal(keys.push(" -"), " ");
  assert.equal(keys.end(), "-");
});
