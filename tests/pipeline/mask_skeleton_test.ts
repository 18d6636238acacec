/** The second masking pass (skeleton forms, fragments) streamed, and secrets by shape. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Buffer } from "node:buffer";
import { collectSecrets, Masker } from "../../lib/pipeline/mask.ts";
import { utf8ByteString } from "../../lib/pipeline/bytes.ts";
import { FRAGMENT } from "../../lib/pipeline/fragments.ts";
import { loadConfig } from "../../lib/config/load.ts";
import { streamed } from "./mask_helpers.ts";
import { tempDir } from "../helpers.ts";

const VALUE = "xK9#mQ2$vL7!pR4@wN8";
const masker = new Masker([{ name: "API_KEY", value: VALUE }]);

function fold(text: string, width: number): string {
  return text.match(new RegExp(`.{1,${width}}`, "g"))!.join("\n");
}

const FORMS: Array<[string, string]> = [
  ["SGR inside", `a=${VALUE.slice(0, 7)}\x1b[01;31m\x1b[K${VALUE.slice(7)}\x1b[m\x1b[K;`],
  ["OSC around and inside", `\x1b]0;title\x07${VALUE.slice(0, 3)}\x1b]8;;u\x1b\\${VALUE.slice(3)}`],
  ["set -x quoting", `+ echo '${VALUE.slice(0, 5)}'\\''${VALUE.slice(5)}'`],
  ["JSON twice", JSON.stringify(JSON.stringify(VALUE))],
  ["upper case", VALUE.toUpperCase()],
  ["UTF-16LE", Buffer.from(VALUE, "utf16le").toString("latin1")],
  ["UTF-16BE with BOM", "\xfe\xff" + Buffer.from(VALUE, "utf16le").swap16().toString("latin1")],
  ...[1, 2, 3, 5, 7, 11].map((w): [string, string] => [`folded at ${w}`, fold(VALUE, w)]),
  ["CRLF folded", fold(VALUE, 4).replaceAll("\n", "\r\n")],
  // What a terminal renders as the value: nroff bold (`man` into a pager), underline, a letter
  // the next one overwrites, and DCS/APC strings a terminal does not show.
  ["backspace bold", [...VALUE].map((c) => `${c}\b${c}`).join("")],
  ["backspace underline", [...VALUE].map((c) => `_\b${c}`).join("")],
  ["a letter overstruck every 4", VALUE.replace(/.{4}/g, "$&x\b")],
  ["DCS between pieces", VALUE.replace(/.{6}/g, "$&\x1bP0;1|ab\x1b\\")],
  ["APC and PM between pieces", VALUE.replace(/.{5}/g, "$&\x1b_x\x1b\\\x1b^y\x1b\\")],
  ["prefix", `id ${VALUE.slice(0, FRAGMENT)}…`],
  ["suffix", `…${VALUE.slice(-FRAGMENT)} end`],
];

Deno.test("skeleton forms are masked whatever the chunks", () => {
  for (const [what, form] of FORMS) {
    const text = `before ${form} middle ${form}\nafter\n`.repeat(5);
    const whole = masker.maskBytes(text);
    assert.ok(whole.includes("$API_KEY"), what);
    const squeezed = whole.replace(
      // deno-lint-ignore no-control-regex
      /.\x08|\x1b[P_^][^\x1b]*\x1b\\|\x1b[^a-zA-Z]*[a-zA-Z]|[\\'"\r\n\0]/g,
      "",
    ).toLowerCase();
    for (let i = 0; i + FRAGMENT <= VALUE.length; i++) {
      assert.ok(
        !squeezed.includes(VALUE.slice(i, i + FRAGMENT).toLowerCase()),
        `${what}: ${whole}`,
      );
    }
    for (const seed of [1, 7, 42, 99]) {
      assert.equal(streamed(masker, text, seed), whole, `${what}, chunks from seed ${seed}`);
    }
  }
});

Deno.test("line breaks and the text around a find stay", () => {
  assert.equal(
    masker.maskText(`k: ${fold(VALUE, 7)}\nnext`),
    "k: $API_KEY\n$API_KEY\n$API_KEY\nnext",
  );
  assert.equal(masker.maskText(`"${VALUE.toUpperCase()}"`), `"$API_KEY"`);
});

Deno.test("a variable whose value has a credential's shape is a secret, unless ignored", () => {
  const env = {
    DATABASE_URL: "postgres://app:hunter2-pw@db:5432/app",
    GH_PAT: "ghp_" + "aB3".repeat(12),
    STRIPE_SK: "sk_live_" + "x1Y2".repeat(6),
    DEPLOY_PEM: "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----\n",
    HOME_PAGE: "https://example.com/path",
    GIT_URL: "git@github.com:a/b.git",
    EDITOR: "vim",
  };
  const { secrets } = collectSecrets(env);
  assert.deepEqual(secrets.map((s) => [s.name, s.value]), [
    ["DATABASE_URL", env.DATABASE_URL],
    ["DATABASE_URL", "hunter2-pw"],
    ["GH_PAT", env.GH_PAT],
    ["STRIPE_SK", env.STRIPE_SK],
    ["DEPLOY_PEM", env.DEPLOY_PEM],
  ]);
  const ignored = collectSecrets({ ...env, MY_TOKEN: "not-a-secret-really" }, ["GH_PAT"], [], [
    "DATABASE_URL",
    "GH_PAT",
    "MY_TOKEN",
  ]);
  assert.deepEqual(ignored.secrets.map((s) => s.name), ["GH_PAT", "STRIPE_SK", "DEPLOY_PEM"]);
  const m = new Masker(secrets);
  assert.equal(
    m.maskText(`dsn=${env.DATABASE_URL} pw=hunter2-pw`),
    "dsn=$DATABASE_URL pw=$DATABASE_URL",
  );
  assert.equal(m.maskText("postgres://app@db:5432/app"), "postgres://app@db:5432/app");
});

Deno.test("secrets.ignore counts from your own config; a project's is ignored with a note", async () => {
  await using dir = await tempDir();
  const user = join(dir.path, "xdg", "magi");
  await Deno.mkdir(user, { recursive: true });
  await Deno.writeTextFile(join(user, "config.jsonc"), '{"secrets": {"ignore": ["SORT_KEY"]}}');
  const project = join(dir.path, "proj");
  await Deno.mkdir(join(project, ".magi"), { recursive: true });
  await Deno.writeTextFile(
    join(project, ".magi", "config.jsonc"),
    '{"secrets": {"ignore": ["GITHUB_TOKEN"], "env": ["PROJECT_VAR"]}}',
  );
  const config = loadConfig({ cwd: project, env: { XDG_CONFIG_HOME: join(dir.path, "xdg") } });
  assert.deepEqual(config.values["secrets.ignore"], ["SORT_KEY"]);
  assert.deepEqual(config.values["secrets.env"], ["PROJECT_VAR"]);
  assert.ok(
    config.notes.some((n) => n.includes('ignored "secrets.ignore"') && n.includes("cannot unmask")),
    config.notes.join("\n"),
  );
});

Deno.test("a fragment shorter than FRAGMENT, and words of a passphrase, stay", () => {
  const m = new Masker([
    { name: "K", value: VALUE },
    { name: "P", value: "correct-horse-battery-staple" },
  ]);
  const text = `${VALUE.slice(0, FRAGMENT - 1)} and a correct-horse-battery story\n`;
  assert.equal(m.maskBytes(utf8ByteString(text)), utf8ByteString(text));
  assert.equal(m.maskText("correct-horse-battery-staple"), "$P");
});

Deno.test("a short word-like value is masked only as written, not in other cases or joined", () => {
  const m = new Masker([{ name: "PASS", value: "summers" }, { name: "PIN_KEY", value: "Hunt3r2" }]);
  assert.equal(m.maskText("pw summers"), "pw $PASS");
  assert.equal(
    m.maskText("Summers are warm; SUMMERS; sum\nmers"),
    "Summers are warm; SUMMERS; sum\nmers",
  );
  // A short value with digits is random enough for the second pass.
  assert.equal(m.maskText("HUNT3R2 and 'Hunt'\\''3r2'"), "$PIN_KEY and '$PIN_KEY'");
});

Deno.test("a stray escape or an unended OSC does not hide a secret", () => {
  const m = new Masker([{ name: "PIN_KEY", value: "Hunt3r2" }, { name: "API_KEY", value: VALUE }]);
  assert.equal(m.maskText("\x1b[Hunt3r2"), "\x1b[$PIN_KEY");
  assert.equal(m.maskText(`\x1b]0;no end ${VALUE} more`), `\x1b]0;no end $API_KEY more`);
  assert.equal(m.maskText(`\n  ${VALUE}`), `\n  $API_KEY`);
});

Deno.test("a credential-named URL masks its password alone too", () => {
  const { secrets } = collectSecrets({ SENTRY_DSN: "https://k3y:pa55w0rd-x@o1.ingest.example/42" });
  assert.deepEqual(secrets.map((s) => s.value), [
    "https://k3y:pa55w0rd-x@o1.ingest.example/42",
    "pa55w0rd-x",
  ]);
});
