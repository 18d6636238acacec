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

Deno.test("PuTTY key files and age identities are masked by shape too, however a stream is cut", () => {
  const putty = [
    "PuTTY-User-Key-File-3: ssh-ed25519",
    "Encryption: none",
    "Public-Lines: 2",
    "AAAAC3NzaC1lZDI1NTE5AAAAIPphS+R2d+KIiDvCTqKUSso8enVP",
    "Private-Lines: 1",
    "AAAAIEZbaH34Qjg/Qc6ZxuDGX6gLWlKh9qWhXeC1Bur4JB4l",
    "Private-MAC: 5a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
  ].join("\n");
  const age = "AGE-SECRET-KEY-1QQPZR4ETC7ZZ2Y0YQLYK6ZZ8E5ZJ3S3XW8W3KZJXN5MZL2PLLZQSRRXG6L";
  const text = `a\n${putty}\nb # ${age}\nc\n`;
  const want = "a\n$PRIVATE_KEY\nb # $PRIVATE_KEY\nc\n";
  assert.equal(new Masker([]).maskText(text), want);
  for (let at = 1; at < text.length; at += 5) {
    const stream = new Masker([]).stream();
    const out = stream.push(text.slice(0, at)) + stream.push(text.slice(at)) + stream.end();
    assert.equal(out, want, `cut at ${at}`);
  }
  // Ordinary capitals are not held back.
  const keys = new PrivateKeyStream();
  assert.equal(keys.push("A Plan for April"), "A Plan for April");
});
