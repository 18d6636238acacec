/**
 * Private keys by shape in every channel: a PEM or OpenSSH private-key block is masked whether
 * or not magi knows its value — through maskText, and through a stream however it is cut.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { TESTDATA } from "../helpers.ts";
import { assertMasked, throughChannels } from "./mask_channels.ts";
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
    "x $PRIVATE_KEY never ends",
  );
});

Deno.test("a block whose END line never comes masks only its body: what follows is shown", () => {
  const pem = Deno.readTextFileSync(join(TESTDATA, "keys", "rsa.pem")).split("\n");
  const body = pem.slice(1, -2);
  const cases: Array<[string, string]> = [
    [
      JSON.stringify({ private_key: pem.slice(0, 10).join("\n") }) + "\nmore\n",
      '{"private_key":"$PRIVATE_KEY"}\nmore\n',
    ],
    [pem.slice(0, 8).join("\n") + "\nafter the cut\n", "$PRIVATE_KEY\nafter the cut\n"],
    [
      `-----BEGIN PRIVATE KEY-----\n${"Abcdefghij".repeat(6)} words after\nnext line\n`,
      "$PRIVATE_KEY words after\nnext line\n",
    ],
    [`'${pem.slice(0, 3).join("\\n")}' and then`, "'$PRIVATE_KEY' and then"],
    [
      "-----BEGIN ENCRYPTED PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A\n\n" +
      body.join("\n") + "\nstatus: ok\n",
      "$PRIVATE_KEY\nstatus: ok\n",
    ],
    [
      pem.map((l, i) => `${String(i + 1).padStart(6)}\t${l}`).join("\n") + "\nend\n",
      `     1\t$PRIVATE_KEY\n${String(pem.length).padStart(6)}\t\nend\n`,
    ],
  ];
  for (const [text, want] of cases) {
    assert.equal(maskPrivateKeys(text), want);
    for (let at = 1; at < text.length; at += 11) {
      const stream = new Masker([]).stream();
      const out = stream.push(text.slice(0, at)) + stream.push(text.slice(at)) + stream.end();
      assert.equal(out, want, `cut at ${at}`);
    }
    for (const line of body.slice(1, 8)) assert.ok(!maskPrivateKeys(text).includes(line));
  }
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

Deno.test("a tool cannot hide the rest of its output behind a BEGIN line with no END", async () => {
  const pem = Deno.readTextFileSync(join(TESTDATA, "keys", "rsa.pem")).split("\n");
  const sa = JSON.stringify({ type: "service_account", private_key: pem.slice(0, 6).join("\n") });
  const channels = await throughChannels(`cat "$DATA/sa.json"; echo; echo "more: the rest"`, {
    files: { "sa.json": sa },
  });
  assertMasked(channels, pem.slice(1, 6).map((l) => l.slice(0, 40)), "$PRIVATE_KEY");
  for (const [channel, text] of Object.entries(channels)) {
    assert.match(text, /more: the rest/, channel);
  }
});
