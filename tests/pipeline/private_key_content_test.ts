/**
 * Private keys by content (`key_material.ts`): a key whose marker lines were dropped or
 * altered, its DER in base64 or hex, and `openssl pkey -text` dumps are masked in every
 * channel; public keys and certificates are not.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Masker } from "../../lib/pipeline/mask.ts";
import { TESTDATA } from "../helpers.ts";
import { streamed } from "./mask_helpers.ts";
import { assertMasked, throughChannels } from "./mask_channels.ts";

const KEYS = join(TESTDATA, "keys");
const read = (name: string) => Deno.readTextFileSync(join(KEYS, name));
const body = (name: string) => read(name).split("\n").filter((l) => l && !l.startsWith("-----"));
const der = Deno.readFileSync(join(KEYS, "rsa.der"));
const hex = Array.from(der, (b) => b.toString(16).padStart(2, "0")).join("");
const b64 = btoa(String.fromCharCode(...der));
/** The hex-colon lines of the private fields of a `-text` dump. */
const dumpLines = (name: string) =>
  read(name).split("\n").filter((l) => /^\s+[0-9a-f]{2}:/.test(l)).map((l) => l.trim());

/** What a tool may print of a key, each with no marker line intact. */
const FORMS: Record<string, string> = {
  "sed 1d": read("rsa.pem").split("\n").slice(1).join("\n"),
  "tr -d -": read("rsa1.pem").replaceAll("-", ""),
  "space in BEGIN": read("ec.pem").replace("-----BEGIN", "----- BEGIN"),
  "two spaces": read("ed.pem").replace("PRIVATE KEY", "PRIVATE  KEY"),
  "OpenSSH body": body("ossh_ed25519").join("\n") + "\n",
  "encrypted, pasted": body("enc.pem").join(" ") + "\n",
  "CRLF, indented": "key: |\r\n" + body("rsa.pem").map((l) => "  " + l).join("\r\n") + "\r\n",
  "DER hex, one line": `der=${hex}\n`,
  "DER hex, xxd -p": hex.replace(/.{60}/g, "$&\n") + "\n",
  "DER base64, one line": `{"key":"${b64}"}\n`,
  "pkey -text": read("rsa_text.txt"),
  "cat -n": read("rsa.pem").split("\n").slice(1).map((l, i) => `${String(i + 1).padStart(6)}\t${l}`)
    .join("\n") + "\n",
  "nl": body("ossh_ed25519").map((l, i) => `${String(i + 1).padStart(6)}\t${l}`).join("\n") + "\n",
  "grep -n": body("rsa1.pem").map((l, i) => `${i + 2}:${l}`).join("\n") + "\n",
  "> quoted": body("rsa.pem").map((l) => `> > ${l}`).join("\n") + "\n",
  "paste -sd,": body("rsa.pem").join(",") + "\n",
  "JSON \\n": `{"k": "${body("rsa1.pem").join("\\n")}\\n"}\n`,
  "ec -text, no header": read("ec_text.txt").split("\n").slice(1).join("\n"),
};

/** Pieces of each form whose presence is a leak. */
function leaksOf(form: string): string[] {
  return form.split(/[\s"{}=,>]+|\\n/).filter((p) => p.length >= 24 && !/^-|KEY|Private/.test(p));
}

Deno.test("key material without its marker lines is masked whole, however a stream is cut", () => {
  const masker = new Masker([{ name: "T", value: "s3cr3t-value-1" }]);
  for (const [what, form] of Object.entries(FORMS)) {
    const text = `before\n${form}after: done\n`;
    for (
      const out of [masker.maskText(text), streamed(masker, text, 7), streamed(masker, text, 99)]
    ) {
      for (const leak of leaksOf(form)) assert.ok(!out.includes(leak), `${what}: ${leak}\n${out}`);
      assert.match(out, /\$PRIVATE_KEY/, what);
      assert.match(out, /^before\n/, what);
      assert.match(out, /after: done\n$/, what);
    }
  }
  for (const name of ["rsa_text.txt", "ec_text.txt"]) {
    const out = new Masker([]).maskText(read(name));
    for (const line of dumpLines(name)) assert.ok(!out.includes(line), `${name}: ${line}`);
  }
});

Deno.test("key material cut into numbered, quoted or comma-joined lines leaks into no channel", async () => {
  const files = ["rsa.pem", "rsa1.pem", "ossh_ed25519"];
  const channels = await throughChannels(
    [
      'sed 1d "$DATA/rsa.pem" | cat -n',
      `sed '1d;$d' "$DATA/ossh_ed25519" | nl`,
      'grep -n . "$DATA/rsa1.pem" | sed 1d',
      `sed 's/^/> /' "$DATA/rsa.pem" | sed 1d`,
      `sed '1d;$d' "$DATA/rsa1.pem" | paste -sd,`,
      "echo after: done",
    ].join("\n"),
    { files: Object.fromEntries(files.map((n) => [n, Deno.readFileSync(join(KEYS, n))])) },
  );
  const leaks = [
    ...body("rsa.pem").slice(1),
    ...body("rsa1.pem").slice(1),
    ...body("ossh_ed25519").slice(1),
  ].map((l) => l.slice(0, 40));
  assertMasked(channels, leaks, "$PRIVATE_KEY");
  assert.match(channels.shown, /after: done/);
});

Deno.test("public keys, certificates, requests and their dumps are not key material", () => {
  const masker = new Masker([]);
  for (const name of ["cert.pem", "pub.pem", "csr.pem", "ossh_ed25519.pub", "cert_text.txt"]) {
    const text = read(name);
    assert.equal(masker.maskText(text), text, name);
    assert.equal(streamed(masker, text, 3), text, name);
  }
  // Ordinary text streams on at once: only what could start key material is held back.
  const stream = masker.stream();
  assert.equal(stream.push("an answer streaming"), "an answer streaming");
  assert.equal(stream.push(" 12:34: ok"), " 12:34: ok");
  assert.equal(stream.end(), "");
});

Deno.test("a tool printing key material without markers leaks it into no channel", async () => {
  const channels = await throughChannels(
    [
      'sed 1d "$DATA/rsa.pem"',
      `tr -d - < "$DATA/rsa1.pem"`,
      `sed 's/-----BEGIN/----- BEGIN/' "$DATA/ec.pem"`,
      `sed '1d;$d' "$DATA/ossh_ed25519"`,
      `od -An -tx1 -v "$DATA/rsa.der" | tr -d ' \\n'; echo`,
      `sed -n '/^privateExponent/,/^prime2/p' "$DATA/rsa_text.txt"`,
    ].join("\n"),
    {
      files: Object.fromEntries(
        ["rsa.pem", "rsa1.pem", "ec.pem", "ossh_ed25519", "rsa.der", "rsa_text.txt"].map((
          n,
        ) => [n, Deno.readFileSync(join(KEYS, n))]),
      ),
    },
  );
  const leaks = [
    ...body("rsa.pem").slice(0, 3),
    ...body("rsa1.pem").slice(0, 3),
    ...body("ec.pem"),
    ...body("ossh_ed25519").slice(0, 3),
    hex.slice(0, 40),
    hex.slice(400, 440),
    ...dumpLines("rsa_text.txt").slice(10, 14),
  ];
  assertMasked(channels, leaks, "$PRIVATE_KEY");
});
